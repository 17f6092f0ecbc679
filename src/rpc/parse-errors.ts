import type { ConnectRouter } from "@connectrpc/connect";
import { encodeEnvelope, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";

// Connect reports a request body that does not decode as protobuf (random
// bytes, or nesting past the decoder's depth limit) as INTERNAL, which
// blames the server for the client's input. (Connect's own framing errors,
// such as an incomplete envelope, are already INVALID_ARGUMENT.) A caller must be able to tell
// "fix your request" from "our bug", so such answers are re-labelled
// INVALID_ARGUMENT here, for each protocol's own encoding of the status.
// JSON bodies that do not parse are already INVALID_ARGUMENT.

const PARSE_FAILURE = /^parse binary/;

export function reclassifyParseErrors(router: ConnectRouter): void {
  const handlers = router.handlers as UniversalHandler[];
  for (let i = 0; i < handlers.length; i++) {
    const original = handlers[i] as UniversalHandler;
    const wrapped = Object.assign(async (req: Parameters<UniversalHandler>[0]) => rewrite(await original(req)), original);
    handlers[i] = wrapped;
  }
}

async function rewrite(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  // gRPC: the status is in the trailers, filled in before the (empty) body ends.
  const trailer = res.trailer;
  if (trailer?.get("grpc-status") === "13" && PARSE_FAILURE.test(decodeURIComponent(trailer.get("grpc-message") ?? ""))) {
    trailer.set("grpc-status", "3");
    return res;
  }
  const type = res.header?.get("content-type") ?? "";
  // Connect unary: HTTP 500 with a JSON error body.
  if (res.status === 500 && type.startsWith("application/json") && res.body) {
    const bytes = await collect(res.body);
    const error = safeJson(bytes);
    if (error?.code === "internal" && PARSE_FAILURE.test(String(error.message))) {
      const header = new Headers(res.header);
      header.delete("content-length");
      return { ...res, status: 400, header, body: once(new TextEncoder().encode(JSON.stringify({ ...error, code: "invalid_argument" }))) };
    }
    return { ...res, body: once(bytes) };
  }
  // Connect streaming: the status is in the end-of-stream envelope (flag 2).
  if (type.startsWith("application/connect+")) {
    return rewriteFirstFrame(res, (chunk) => {
      if (!((chunk[0] ?? 0) & 0x02)) return undefined;
      const end = safeJson(chunk.subarray(5)) as { error?: { code?: unknown; message?: unknown } } | undefined;
      if (end?.error?.code !== "internal" || !PARSE_FAILURE.test(String(end.error.message))) return undefined;
      return encodeEnvelope(0x02, new TextEncoder().encode(JSON.stringify({ ...end, error: { ...end.error, code: "invalid_argument" } })));
    });
  }
  // gRPC-Web: the status is in a trailer frame inside the body.
  if (type.startsWith("application/grpc-web")) {
    return rewriteFirstFrame(res, (chunk) => {
      if (!((chunk[0] ?? 0) & 0x80)) return undefined;
      const text = new TextDecoder().decode(chunk.subarray(5));
      if (!/grpc-status: ?13\r\n/.test(text) || !/grpc-message: ?parse(%20| )binary/.test(text)) return undefined;
      return encodeEnvelope(0x80, new TextEncoder().encode(text.replace(/grpc-status: ?13\r\n/, "grpc-status: 3\r\n")));
    });
  }
  return res;
}

/**
 * An error raised while reading the request is the whole answer, in the
 * body's first chunk: offer that chunk to `rewrite`, keep the rest as is.
 */
async function rewriteFirstFrame(
  res: UniversalServerResponse,
  rewrite: (chunk: Uint8Array) => Uint8Array | undefined,
): Promise<UniversalServerResponse> {
  if (!res.body || !(Symbol.asyncIterator in res.body)) return res;
  const it = res.body[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return { ...res, body: once() };
  const rest = { [Symbol.asyncIterator]: () => it };
  return { ...res, body: prepend(rewrite(first.value) ?? first.value, rest) };
}

async function collect(body: AsyncIterable<Uint8Array> | Uint8Array): Promise<Uint8Array> {
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function safeJson(bytes: Uint8Array): { code?: unknown; message?: unknown } | undefined {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as { code?: unknown; message?: unknown };
  } catch {
    return undefined;
  }
}

async function* once(...chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* chunks;
}

async function* prepend(first: Uint8Array, rest: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  yield first;
  yield* rest;
}
