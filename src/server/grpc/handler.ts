import http2 from "node:http2";
import type { ConnectError, Interceptor, ServiceImplSpec } from "@connectrpc/connect";
import type { Logger } from "../../log/logger.js";
import { acceptsGzip, CONTENT_TYPE, finish, type LiveCalls, startCall, toError } from "./call.js";
import { parse, readMessage } from "./message.js";
import { type ServerStreamSpec, writeStream } from "./server-stream.js";
import { answerUnary, type UnarySpec } from "./unary.js";

// Unary gRPC calls are the hot path of every agent turn, and a tail's events
// go out once per tail: Connect's generic handler (async-iterable pipelines,
// Web Headers, URL parsing, an AbortError with a stack trace per call, an
// encoding per message) cost more CPU than the work itself. This handler
// serves the common case directly on Node's HTTP/2 request: a unary or
// server-streaming method, a binary protobuf body, no request compression.
// Everything else (Connect, gRPC-Web, JSON, compressed requests, client or
// bidi streams, unknown paths) goes to Connect unchanged, and so do all
// decisions that matter: the same service implementations, the same
// interceptors (auth, the error funnel), Connect's own timeout parsing and
// trailer encoding. It answers with the statuses and messages Connect's
// handler gives (with rpc/parse-errors.ts: a body that does not parse is
// INVALID_ARGUMENT on both).

export interface GrpcOptions {
  services: ServiceImplSpec[];
  interceptors: Interceptor[];
  readMaxBytes: number;
  writeMaxBytes: number;
  shutdownSignal: AbortSignal;
  logger: Logger;
}

type Route = UnarySpec | ServerStreamSpec;

/**
 * Returns a function that serves a request when it is a gRPC call it can
 * take, and returns false otherwise (the caller hands it to Connect).
 */
export function grpcHandler(options: GrpcOptions): (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => boolean {
  const routes = new Map<string, Route>();
  for (const service of options.services) {
    for (const method of service.service.methods) {
      const spec = service.methods[method.localName];
      if (spec?.kind === "unary" || spec?.kind === "server_streaming")
        routes.set(`/${service.service.typeName}/${method.name}`, spec as Route);
    }
  }
  const live: LiveCalls = { calls: new Set(), shutdown: options.shutdownSignal };
  options.shutdownSignal.addEventListener("abort", () => {
    for (const state of live.calls) state.abort(options.shutdownSignal.reason);
  });
  // Everything a call throws becomes its status; what escapes is writing the
  // answer itself failing. Log it and reset the stream rather than leave an
  // unhandled rejection to end the process.
  const failed = (res: http2.Http2ServerResponse) => (err: unknown) => {
    options.logger.error("could not write a gRPC answer", { err });
    if (!res.stream.destroyed) res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  };
  return (req, res) => {
    if (req.method !== "POST") return false;
    const route = routes.get(req.url);
    if (!route) return false;
    const type = req.headers["content-type"];
    if (type !== "application/grpc" && type !== CONTENT_TYPE) return false;
    const encoding = req.headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    serve(route, req, res, options, live).catch(failed(res));
    return true;
  };
}

/** One call: read the request message, run the implementation, end with the status (and a unary call's answer). */
async function serve(route: Route, req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, options: GrpcOptions, live: LiveCalls) {
  const { method } = route;
  const call = startCall(method, req, live);
  const { context, state } = call;
  let body: Uint8Array | undefined;
  let error: ConnectError | undefined;
  try {
    if (call.timeoutError) throw call.timeoutError;
    const input = parse(method, await readMessage(req, method, options.readMaxBytes, state));
    const gzip = acceptsGzip(req);
    if (route.kind === "unary") body = await answerUnary(route, input, context, state, gzip, options);
    else await writeStream(route, input, context, gzip, res, options);
  } catch (err) {
    error = toError(err);
  } finally {
    call.end();
  }
  finish(res, context, error, body);
}
