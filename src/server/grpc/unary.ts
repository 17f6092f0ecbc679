import type http2 from "node:http2";
import type { DescMethodUnary } from "@bufbuild/protobuf";
import type { ConnectError, MethodImplSpec } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { acceptsGzip, finish, type LiveCalls, startCall, toError } from "./call.js";
import type { GrpcOptions } from "./handler.js";
import { envelope, parse, readMessage, serialize, worthCompressing } from "./message.js";

export type UnarySpec = MethodImplSpec & { kind: "unary"; method: DescMethodUnary };

/** One unary call: read the message, run the implementation through the interceptors, answer with message and status. */
export async function serveUnary(
  spec: UnarySpec,
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  options: GrpcOptions,
  live: LiveCalls,
): Promise<void> {
  const call = startCall(spec.method, req, live);
  const { context } = call;
  let body: Uint8Array | undefined;
  let error: ConnectError | undefined;
  try {
    if (call.timeoutError) throw call.timeoutError;
    const input = parse(spec.method, await readMessage(req, spec.method, options.readMaxBytes));
    const output = await invokeUnaryImplementation(spec, context, input, options.interceptors);
    const bytes = serialize(spec.method, output, options.writeMaxBytes);
    const compress = acceptsGzip(req) && worthCompressing(bytes);
    if (compress) context.responseHeader.set("grpc-encoding", "gzip");
    body = await envelope(bytes, compress);
  } catch (err) {
    error = toError(err);
  } finally {
    call.end();
  }
  finish(res, context, error, body);
}
