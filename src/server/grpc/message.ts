import type http2 from "node:http2";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { type DescMethod, fromBinary, type Message, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { knownEncoding } from "../../rpc/encoded.js";
import { UNNAMED_COMPRESSION } from "../../rpc/parse-errors.js";
import type { CallState } from "./call.js";

/** Responses at least this large are gzipped when the client accepts it (Connect's default). */
const COMPRESS_MIN_BYTES = 1024;
const gzipAsync = promisify(gzip);

/**
 * Reads the one enveloped request message, refusing what Connect refuses,
 * with its messages. A client that is slow to send it is not waited for past
 * the call's end (its deadline, or the server's forced shutdown).
 */
export function readMessage(req: http2.Http2ServerRequest, method: DescMethod, readMaxBytes: number, call: CallState): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    let unwatch = () => {};
    const fail = (err: ConnectError) => {
      refused = true;
      // The rest of the body is read and dropped, so the stream can end cleanly.
      chunks.length = 0;
      unwatch();
      reject(err);
    };
    const ended = () => fail(ConnectError.from(call.reason, Code.Canceled));
    // Connect names the method kind as its messages do ("server_streaming" reads "server-streaming").
    const kind = method.methodKind === "server_streaming" ? "server-streaming" : method.methodKind;
    const extraMessage = () => new ConnectError(`protocol error: received extra input message for ${kind} method`, Code.Unimplemented);
    /** The envelope's whole size, once its header is in. */
    let expected: number | undefined;
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      if (size < 5 && size + chunk.length >= 5) {
        const head = size === 0 ? chunk : Buffer.concat([...chunks, chunk]);
        const length = head.readUInt32BE(1);
        if (length > readMaxBytes) {
          fail(new ConnectError(`message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`, Code.ResourceExhausted));
          return;
        }
        expected = 5 + length;
      }
      size += chunk.length;
      chunks.push(chunk);
      // A second envelope's header is in: the call has too many messages.
      // Refuse now rather than hold whatever else the client sends.
      if (expected !== undefined && size >= expected + 5) fail(extraMessage());
    });
    req.once("error", (err) => {
      if (!refused) fail(ConnectError.from(err, Code.Canceled));
    });
    req.once("end", () => {
      if (refused) return;
      unwatch();
      const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      if (all.length === 0) return reject(new ConnectError(`protocol error: missing input message for ${kind} method`, Code.Unimplemented));
      if (all.length < 5) return reject(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      const flags = all[0] as number;
      const length = all.readUInt32BE(1);
      if (all.length < 5 + length) return reject(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      if (all.length > 5 + length) return reject(extraMessage());
      if (flags & 0x01) return reject(new ConnectError(UNNAMED_COMPRESSION, Code.InvalidArgument));
      if (flags !== 0) return reject(new ConnectError("unexpected end flag", Code.InvalidArgument));
      resolve(all.subarray(5));
    });
    // After the listeners: what the client still sends is read and dropped.
    if (call.aborted) ended();
    else unwatch = call.watch(ended);
  });
}

/** Undecodable input is the caller's fault: INVALID_ARGUMENT, where Connect says INTERNAL. */
export function parse<M extends DescMethod>(method: M, bytes: Uint8Array): MessageShape<M["input"]> {
  try {
    return fromBinary(method.input, bytes) as MessageShape<M["input"]>;
  } catch (err) {
    throw new ConnectError(`parse binary: ${err instanceof Error ? err.message : String(err)}`, Code.InvalidArgument);
  }
}

/** The response's protobuf bytes: the known encoding when the handler registered one. */
export function serialize(method: DescMethod, output: Message, writeMaxBytes: number): Uint8Array {
  const bytes = knownEncoding(output) ?? toBinary(method.output, output);
  if (bytes.byteLength > writeMaxBytes) {
    throw new ConnectError(
      `message size ${bytes.byteLength} is larger than configured writeMaxBytes ${writeMaxBytes}`,
      Code.ResourceExhausted,
    );
  }
  return bytes;
}

/** Whether `envelope` compresses a message of this size when the client accepts gzip. */
export function worthCompressing(bytes: Uint8Array): boolean {
  return bytes.byteLength >= COMPRESS_MIN_BYTES;
}

/** The message in its 5-byte gRPC envelope, gzipped when `compress` is set. */
export async function envelope(bytes: Uint8Array, compress: boolean): Promise<Uint8Array> {
  return compress ? encodeEnvelope(1, await gzipAsync(bytes)) : encodeEnvelope(0, bytes);
}
