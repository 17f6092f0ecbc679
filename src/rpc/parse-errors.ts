import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import { encodeEnvelope, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeFromString, codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { decodeConnectMessage, encodeGrpcMessage } from "./grpc-message.js";

// Connect's answers, corrected where its handler and this server disagree,
// in each protocol's own encoding of the status:
//
// - A request body that does not decode as protobuf (random bytes, nesting
//   past the decoder's depth limit) is INTERNAL in Connect, which blames the
//   server for the client's input. A caller must be able to tell "fix your
//   request" from "our bug": it is INVALID_ARGUMENT here. (Connect's own
//   framing errors, such as an incomplete envelope, and JSON bodies that do
//   not parse are already INVALID_ARGUMENT.)
// - So is a message flagged compressed in a request that names no encoding
//   (no grpc-encoding, or connect-content-encoding), with a message that says so.
// - gRPC and gRPC-Web carry grpc-message in the spec's encoding
//   (rpc/grpc-message.ts), not Connect's encodeURIComponent.
//
// The gRPC fast path (server/grpc/) answers the same by itself.

/** The message of a compressed message whose encoding the request does not name, on every path. */
export const UNNAMED_COMPRESSION = "protocol error: the message is flagged compressed, but the request names no encoding to decompress it";

const PARSE_FAILURE = /^parse binary/;
const CONNECT_UNNAMED_COMPRESSION = "received compressed envelope, but do not know how to decompress";

/** The status this server gives where Connect gave `code` and `message`. */
export function correctStatus(code: Code, message: string): { code: Code; message: string } {
  if (code !== Code.Internal) return { code, message };
  if (PARSE_FAILURE.test(message)) return { code: Code.InvalidArgument, message };
  if (message === CONNECT_UNNAMED_COMPRESSION) return { code: Code.InvalidArgument, message: UNNAMED_COMPRESSION };
  return { code, message };
}

export function reclassifyParseErrors(router: ConnectRouter): void {
  const handlers = router.handlers as UniversalHandler[];
  for (let i = 0; i < handlers.length; i++) {
    const original = handlers[i] as UniversalHandler;
    const wrapped = Object.assign(async (req: Parameters<UniversalHandler>[0]) => rewrite(await original(req)), original);
    handlers[i] = wrapped;
  }
}

async function rewrite(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  // gRPC: the status is in the trailers, complete once the body has ended
  // (the adapter reads them only then).
  const trailer = res.trailer;
  if (trailer) {
    if (!res.body || !(Symbol.asyncIterator in res.body)) {
      correctTrailer(trailer);
      return res;
    }
    return { ...res, body: thenRun(res.body, () => correctTrailer(trailer)) };
  }
  const type = res.header?.get("content-type") ?? "";
  // Connect unary: an HTTP error status with a JSON error body.
  if (res.status === 500 && type.startsWith("application/json") && res.body) {
    const bytes = await collect(res.body);
    const error = safeJson(bytes) as { code?: unknown; message?: unknown } | undefined;
    const fixed = typeof error?.code === "string" ? correctConnect(error.code, String(error.message ?? "")) : undefined;
    if (error && fixed) {
      const header = new Headers(res.header);
      header.delete("content-length");
      const body = new TextEncoder().encode(JSON.stringify({ ...error, ...fixed }));
      return { ...res, status: codeToHttpStatus(codeFromString(fixed.code) ?? Code.Internal), header, body: once(body) };
    }
    return { ...res, body: once(bytes) };
  }
  // Connect streaming: the status is in the end-of-stream message (flag 2).
  if (type.startsWith("application/connect+")) {
    const encoding = res.header?.get("connect-content-encoding") ?? null;
    return mapFrames(res, 0x02, encoding, (data) => {
      const end = safeJson(data) as { error?: { code?: unknown; message?: unknown } } | undefined;
      if (typeof end?.error?.code !== "string") return undefined;
      const fixed = correctConnect(end.error.code, String(end.error.message ?? ""));
      if (!fixed) return undefined;
      return new TextEncoder().encode(JSON.stringify({ ...end, error: { ...end.error, ...fixed } }));
    });
  }
  // gRPC-Web: the status is in a trailer message inside the body (flag 0x80).
  if (type.startsWith("application/grpc-web")) {
    const encoding = res.header?.get("grpc-encoding") ?? null;
    return mapFrames(res, 0x80, encoding, (data) => {
      const headers = parseWebTrailer(data);
      correctTrailer(headers);
      return serializeWebTrailer(headers);
    });
  }
  return res;
}

function correctTrailer(trailer: Headers): void {
  const status = trailer.get("grpc-status");
  const raw = trailer.get("grpc-message");
  if (status === null || status === "0" || raw === null) return;
  const fixed = correctStatus(Number(status) as Code, decodeConnectMessage(raw));
  trailer.set("grpc-status", String(fixed.code));
  trailer.set("grpc-message", encodeGrpcMessage(fixed.message));
}

/** Connect's JSON error, corrected; undefined when it stands. */
function correctConnect(code: string, message: string): { code: string; message: string } | undefined {
  const given = codeFromString(code);
  if (given === undefined) return undefined;
  const fixed = correctStatus(given, message);
  if (fixed.code === given && fixed.message === message) return undefined;
  return { code: codeToString(fixed.code), message: fixed.message };
}

/**
 * Offers each message of the body whose flags include `flag` (its data
 * decompressed) to `rewrite`; a rewritten one goes out uncompressed, which
 * every protocol allows per message. Connect's handlers yield one enveloped
 * message per chunk.
 */
function mapFrames(
  res: UniversalServerResponse,
  flag: number,
  encoding: string | null,
  rewrite: (data: Uint8Array) => Uint8Array | undefined,
): UniversalServerResponse {
  if (!res.body || !(Symbol.asyncIterator in res.body)) return res;
  const body = res.body;
  async function* mapped(): AsyncIterable<Uint8Array> {
    for await (const chunk of body) {
      const flags = chunk[0] ?? 0;
      if (!(flags & flag) || chunk.length < 5) {
        yield chunk;
        continue;
      }
      const data = decompress(chunk.subarray(5), flags & 0x01 ? encoding : null);
      const replaced = data && rewrite(data);
      yield replaced ? encodeEnvelope(flags & ~0x01, replaced) : chunk;
    }
  }
  return { ...res, body: mapped() };
}

function decompress(data: Uint8Array, encoding: string | null): Uint8Array | undefined {
  if (encoding === null) return data;
  if (encoding === "gzip") return gunzipSync(data);
  if (encoding === "br") return brotliDecompressSync(data);
  return undefined;
}

/** gRPC-Web trailers: header fields separated by CRLF, as Connect writes and reads them. */
function parseWebTrailer(data: Uint8Array): Headers {
  const headers = new Headers();
  for (const line of new TextDecoder().decode(data).split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return headers;
}

function serializeWebTrailer(headers: Headers): Uint8Array {
  let text = "";
  headers.forEach((value, name) => {
    text += `${name}: ${value}\r\n`;
  });
  return new TextEncoder().encode(text);
}

async function* thenRun(body: AsyncIterable<Uint8Array>, after: () => void): AsyncIterable<Uint8Array> {
  yield* body;
  after();
}

async function collect(body: AsyncIterable<Uint8Array> | Uint8Array): Promise<Uint8Array> {
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function safeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

async function* once(...chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* chunks;
}
