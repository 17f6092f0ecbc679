import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { REQUEST_ID_HEADER } from "../server/request-id.js";
import { getTracer, REQUEST_ID } from "./tracing.js";

// One SERVER span per call, on gRPC's fast path and Connect's alike (both run
// the same interceptors), named `package.Service/Method` with the semantic
// conventions' rpc.* attributes. The parent is the caller's W3C
// `traceparent` (and `tracestate`), whatever the protocol: all three carry
// it as a request header. Installed only while tracing is on.

const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

/** Server-side status codes that mark a span as failed (OpenTelemetry's gRPC conventions); the rest are the caller's. */
const SERVER_FAULTS: ReadonlySet<Code> = new Set([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

const CLIENT_LEFT = new ConnectError("the stream was abandoned before its end", Code.Canceled);

function rpcSystem(contentType: string | null): "grpc" | "grpc_web" | "connect_rpc" {
  if (contentType?.startsWith("application/grpc-web")) return "grpc_web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect_rpc";
}

/** Connect's names for codes, as rpc.connect_rpc.error_code spells them ("not_found"). */
function connectCodeName(code: Code): string {
  return (Code[code] as string).replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

export function traceInterceptor(): Interceptor {
  const tracer = getTracer();
  return (next) => async (req) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.header, headerGetter);
    const system = rpcSystem(req.header.get("content-type"));
    const requestId = req.header.get(REQUEST_ID_HEADER);
    const attributes: Attributes = {
      // gRPC-Web is gRPC's protocol over HTTP/1.1 and browsers: rpc.system says grpc, the protocol says which.
      "rpc.system": system === "connect_rpc" ? "connect_rpc" : "grpc",
      "rpc.service": req.service.typeName,
      "rpc.method": req.method.name,
      "sessionstore.protocol": system,
    };
    if (requestId !== null) attributes["sessionstore.request_id"] = requestId;
    const span = tracer.startSpan(`${req.service.typeName}/${req.method.name}`, { kind: SpanKind.SERVER, attributes }, parent);
    let active = trace.setSpan(parent, span);
    if (requestId !== null) active = active.setValue(REQUEST_ID, requestId);
    const end = (err?: unknown) => endSpan(span, system, err);
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await context.with(active, () => next(req));
    } catch (err) {
      end(err);
      throw err;
    }
    if (!res.stream) {
      end();
      return res;
    }
    return { ...res, message: within(res.message, active, end, req.signal) };
  };
}

function endSpan(span: Span, system: string, err: unknown): void {
  if (err === undefined) {
    if (system !== "connect_rpc") span.setAttribute("rpc.grpc.status_code", 0);
    span.end();
    return;
  }
  const code = err instanceof ConnectError ? err.code : Code.Internal;
  if (system === "connect_rpc") span.setAttribute("rpc.connect_rpc.error_code", connectCodeName(code));
  else span.setAttribute("rpc.grpc.status_code", code);
  if (SERVER_FAULTS.has(code)) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof ConnectError ? err.rawMessage : String(err) });
  }
  span.end();
}

/**
 * A server stream's messages, produced inside the call's context: the
 * implementation runs when the stream is read, outside the interceptor, so
 * each step is run in the span's context here. The span ends with the
 * stream: its last message, its error, or the client leaving.
 */
function within<T>(messages: AsyncIterable<T>, active: Context, end: (err?: unknown) => void, signal: AbortSignal): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const it = messages[Symbol.asyncIterator]();
      let ended = false;
      const finish = (err?: unknown) => {
        if (ended) return;
        ended = true;
        end(err);
      };
      const step = (run: () => Promise<IteratorResult<T>>) =>
        context.with(active, run).then(
          (result) => {
            if (result.done) finish();
            return result;
          },
          (err: unknown) => {
            finish(err);
            throw err;
          },
        );
      return {
        next: (...args) => step(() => it.next(...args)),
        return: (value?: unknown) => {
          // Returned early: the client left (perhaps before its signal says so), or the call was ended for it.
          finish(signal.aborted ? ConnectError.from(signal.reason, Code.Canceled) : CLIENT_LEFT);
          return it.return
            ? context.with(active, () => (it.return as (v?: unknown) => Promise<IteratorResult<T>>)(value))
            : Promise.resolve({ done: true, value: undefined as T });
        },
        throw: (err?: unknown) => {
          finish(err);
          return it.throw
            ? context.with(active, () => (it.throw as (e?: unknown) => Promise<IteratorResult<T>>)(err))
            : Promise.reject(err);
        },
      };
    },
  };
}
