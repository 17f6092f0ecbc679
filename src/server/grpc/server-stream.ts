import type http2 from "node:http2";
import type { DescMethodServerStreaming, Message } from "@bufbuild/protobuf";
import type { HandlerContext, MethodImplSpec } from "@connectrpc/connect";
import { createAsyncIterable, transformInvokeImplementation } from "@connectrpc/connect/protocol";
import { knownEncoding } from "../../rpc/encoded.js";
import { isGone, sendHeaders } from "./call.js";
import type { GrpcOptions } from "./handler.js";
import { envelope, serialize, worthCompressing } from "./message.js";

export type ServerStreamSpec = MethodImplSpec & { kind: "server_streaming"; method: DescMethodServerStreaming };

// A tail's event goes to every tail of its scope, as the very same response
// message with its encoding registered (rpc/stream-events.ts). Its frame is
// made once, not once per tail: with a thousand tails on one session,
// per-tail encoding and Connect's per-message pipeline were most of the
// server's work per delivery.
const plainFrames = new WeakMap<Uint8Array, Promise<Uint8Array>>();
const gzipFrames = new WeakMap<Uint8Array, Promise<Uint8Array>>();

/**
 * Runs a server-streaming implementation through the interceptors and writes
 * each response as it comes, waiting while the client reads slower than the
 * stream writes.
 */
export async function writeStream(
  spec: ServerStreamSpec,
  input: Message,
  context: HandlerContext,
  gzip: boolean,
  res: http2.Http2ServerResponse,
  options: GrpcOptions,
): Promise<void> {
  // As Connect does: the header names the encoding up front, and each message
  // says in its flags whether it was worth compressing.
  if (gzip) context.responseHeader.set("grpc-encoding", "gzip");
  const outputs = transformInvokeImplementation(spec, context, options.interceptors)(createAsyncIterable([input]));
  for await (const output of outputs) {
    // Stopped here, not by the implementation (which says itself how it
    // ended, as it does on Connect's path): the call's end is the reason.
    if (context.signal.aborted) throw context.signal.reason;
    const data = await encodeFrame(spec.method, output, gzip, options.writeMaxBytes);
    if (isGone(res)) return;
    sendHeaders(res, context);
    if (!res.write(data)) await drained(res, context.signal);
  }
}

/** The message's frame; a registered encoding's frame is made once and shared by every stream that sends it. */
function encodeFrame(method: DescMethodServerStreaming, output: Message, gzip: boolean, writeMaxBytes: number): Promise<Uint8Array> {
  const bytes = serialize(method, output, writeMaxBytes);
  const compress = gzip && worthCompressing(bytes);
  if (knownEncoding(output) !== bytes) return envelope(bytes, compress);
  const frames = compress ? gzipFrames : plainFrames;
  let framed = frames.get(bytes);
  if (!framed) {
    framed = envelope(bytes, compress);
    frames.set(bytes, framed);
  }
  return framed;
}

/** Resolves when the response can take more, or the call is over. */
function drained(res: http2.Http2ServerResponse, signal: AbortSignal): Promise<void> {
  if (signal.aborted || isGone(res)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
