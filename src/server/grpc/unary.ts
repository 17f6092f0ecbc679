import type { DescMethodUnary, Message } from "@bufbuild/protobuf";
import type { HandlerContext, MethodImplSpec } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import type { GrpcOptions } from "./handler.js";
import { envelope, serialize, worthCompressing } from "./message.js";

export type UnarySpec = MethodImplSpec & { kind: "unary"; method: DescMethodUnary };

/** Runs a unary implementation through the interceptors; returns its answer in its envelope. */
export async function answerUnary(
  spec: UnarySpec,
  input: Message,
  context: HandlerContext,
  gzip: boolean,
  options: GrpcOptions,
): Promise<Uint8Array> {
  const output = await invokeUnaryImplementation(spec, context, input, options.interceptors);
  const bytes = serialize(spec.method, output, options.writeMaxBytes);
  const compress = gzip && worthCompressing(bytes);
  if (compress) context.responseHeader.set("grpc-encoding", "gzip");
  return envelope(bytes, compress);
}
