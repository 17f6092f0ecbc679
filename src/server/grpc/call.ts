import type http2 from "node:http2";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type HandlerContext } from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { encodeGrpcMessage } from "../../rpc/grpc-message.js";

export const CONTENT_TYPE = "application/grpc+proto";

/** The reason a finished call's signal is aborted with: no DOMException and stack per call. */
const COMPLETED = new ConnectError("call completed", Code.Canceled);
/** setTimeout fires at once for longer delays; deadlines past it (grpc-go's 30 days is 2592000S) get no timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Where a call stands: whether it is over (deadline, client gone, forced
 * shutdown, or done) and why. Its AbortSignal is made only when something
 * asks for it: a unary handler rarely does, and creating, watching and
 * aborting a signal was a fifth of the fast path's fixed cost per call.
 */
export class CallState {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #watcher: (() => void) | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** The call's signal, aborted already (with the same reason) when the call is over. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Ends the call with `reason`; the first reason stays, as an AbortController's does. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#watcher?.();
  }

  /** Calls `watcher` once when the call ends (one at a time: reading the request); returns the unwatch. */
  watch(watcher: () => void): () => void {
    this.#watcher = watcher;
    return () => {
      if (this.#watcher === watcher) this.#watcher = undefined;
    };
  }
}

/** A call's handler context; its signal is a prototype getter (an accessor per object literal is slow). */
class CallContext implements HandlerContext {
  readonly service: HandlerContext["service"];
  readonly protocolName = "grpc";
  readonly requestMethod = "POST";
  readonly requestHeader: Headers;
  readonly responseHeader = new Headers({ "content-type": CONTENT_TYPE });
  readonly responseTrailer = new Headers({ "grpc-status": "0" });
  readonly url: string;
  readonly values = createContextValues();
  readonly #state: CallState;
  readonly #deadline: number | undefined;
  constructor(
    readonly method: DescMethod,
    state: CallState,
    deadline: number | undefined,
    req: http2.Http2ServerRequest,
  ) {
    this.service = method.parent;
    this.#state = state;
    this.#deadline = deadline;
    this.requestHeader = requestHeaders(req);
    this.url = `${"encrypted" in req.socket && req.socket.encrypted ? "https" : "http"}://${req.authority}${req.url}`;
  }
  get signal(): AbortSignal {
    return this.#state.signal;
  }
  timeoutMs = (): number | undefined => (this.#deadline === undefined ? undefined : this.#deadline - Date.now());
}

/** One gRPC call served on Node's request: its handler context and the single signal behind it. */
export interface GrpcCall {
  context: HandlerContext;
  state: CallState;
  /** A grpc-timeout header that does not parse: the call's answer. */
  timeoutError: ConnectError | undefined;
  /** Releases the call's listeners and timer and aborts its signal, as Connect does when a call is over. */
  end(): void;
}

/** The calls in flight, which a forced shutdown aborts. */
export interface LiveCalls {
  calls: Set<CallState>;
  shutdown: AbortSignal;
}

/**
 * Starts a call: one call state where Connect links three AbortControllers
 * (the deadline, the client leaving, the server shutting down).
 */
export function startCall(method: DescMethod, req: http2.Http2ServerRequest, live: LiveCalls): GrpcCall {
  const timeout = parseTimeout(single(req.headers["grpc-timeout"]) ?? null, Number.MAX_SAFE_INTEGER);
  const state = new CallState();
  if (live.shutdown.aborted) state.abort(live.shutdown.reason);
  live.calls.add(state);
  const onClose = () => state.abort(new ConnectError("the client closed the call", Code.Canceled));
  req.once("close", onClose);
  const { timeoutMs } = timeout;
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const expire = () => state.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined) {
    // A deadline already past (grpc-js sends "0m") aborts before the handler runs.
    if (timeoutMs <= 0) expire();
    else if (timeoutMs <= MAX_TIMER_MS) timer = setTimeout(expire, timeoutMs);
  }
  const context = new CallContext(method, state, deadline, req);
  return {
    context,
    state,
    timeoutError: timeout.error,
    end() {
      req.off("close", onClose);
      if (timer) clearTimeout(timer);
      live.calls.delete(state);
      state.abort(COMPLETED);
    },
  };
}

export function toError(err: unknown): ConnectError {
  // The interceptors' error funnel has classified everything the
  // implementation threw; what is left was raised here, outside it.
  if (err instanceof ConnectError) return err;
  return new ConnectError("internal error", Code.Internal, undefined, undefined, err);
}

/** Sends the response headers unless they are out already. */
export function sendHeaders(res: http2.Http2ServerResponse, context: HandlerContext): void {
  if (!res.headersSent) res.writeHead(200, toNodeHeaders(context.responseHeader));
}

/** Ends the response with its trailers: the status, and `body` when a unary call has one. */
export function finish(res: http2.Http2ServerResponse, context: HandlerContext, error: ConnectError | undefined, body?: Uint8Array): void {
  if (isGone(res)) return;
  const trailer = context.responseTrailer;
  if (error) {
    setTrailerStatus(trailer, error);
    trailer.set("grpc-message", encodeGrpcMessage(error.rawMessage));
  }
  sendHeaders(res, context);
  res.addTrailers(toNodeHeaders(trailer));
  if (body) res.end(body);
  else res.end();
}

/** Whether the response can no longer be written: the client left, or it was ended. */
export function isGone(res: http2.Http2ServerResponse): boolean {
  // Http2ServerResponse is not a Writable: its own `destroyed` is undefined; its stream's is not.
  return res.stream.destroyed || res.stream.closed || res.writableEnded;
}

export function acceptsGzip(req: http2.Http2ServerRequest): boolean {
  const accept = single(req.headers["grpc-accept-encoding"]);
  return accept?.split(",").some((name) => name.trim() === "gzip") ?? false;
}

function requestHeaders(req: http2.Http2ServerRequest): Headers {
  const header = new Headers();
  const raw = req.headers;
  for (const name in raw) {
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = raw[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) header.append(name, v);
    else header.append(name, value);
  }
  return header;
}

function toNodeHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
