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

/** One gRPC call served on Node's request: its handler context and the single signal behind it. */
export interface GrpcCall {
  context: HandlerContext;
  /** A grpc-timeout header that does not parse: the call's answer. */
  timeoutError: ConnectError | undefined;
  /** Releases the call's listeners and timer and aborts its signal, as Connect does when a call is over. */
  end(): void;
}

/** The calls in flight, which a forced shutdown aborts. */
export interface LiveCalls {
  calls: Set<AbortController>;
  shutdown: AbortSignal;
}

/**
 * Starts a call: one AbortController where Connect links three (the
 * deadline, the client leaving, the server shutting down).
 */
export function startCall(method: DescMethod, req: http2.Http2ServerRequest, live: LiveCalls): GrpcCall {
  const timeout = parseTimeout(single(req.headers["grpc-timeout"]) ?? null, Number.MAX_SAFE_INTEGER);
  const controller = new AbortController();
  if (live.shutdown.aborted) controller.abort(live.shutdown.reason);
  live.calls.add(controller);
  const onClose = () => controller.abort(new ConnectError("the client closed the call", Code.Canceled));
  req.once("close", onClose);
  const { timeoutMs } = timeout;
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const expire = () => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined) {
    // A deadline already past (grpc-js sends "0m") aborts before the handler runs.
    if (timeoutMs <= 0) expire();
    else if (timeoutMs <= MAX_TIMER_MS) timer = setTimeout(expire, timeoutMs);
  }
  const context: HandlerContext = {
    service: method.parent,
    method,
    protocolName: "grpc",
    requestMethod: "POST",
    signal: controller.signal,
    timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
    requestHeader: requestHeaders(req),
    responseHeader: new Headers({ "content-type": CONTENT_TYPE }),
    responseTrailer: new Headers({ "grpc-status": "0" }),
    url: `${"encrypted" in req.socket && req.socket.encrypted ? "https" : "http"}://${req.authority}${req.url}`,
    values: createContextValues(),
  };
  return {
    context,
    timeoutError: timeout.error,
    end() {
      req.off("close", onClose);
      if (timer) clearTimeout(timer);
      live.calls.delete(controller);
      controller.abort(COMPLETED);
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
