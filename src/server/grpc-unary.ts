import type http2 from "node:http2";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { type DescMethodUnary, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { knownEncoding } from "../rpc/encoded.js";

// Unary gRPC calls are the hot path of every agent turn, and Connect's
// generic handler (async-iterable pipelines, Web Headers, URL parsing, an
// AbortError with a stack trace per call) costs about 0.2 ms of CPU per call:
// more than the append's own work. This handler serves the common case
// directly on Node's HTTP/2 request: a unary method, a binary protobuf body,
// no request compression. Everything else (streams, Connect, gRPC-Web, JSON,
// compressed requests, unknown paths) goes to Connect unchanged, and so do
// all decisions that matter: the same service implementations, the same
// interceptors (auth, the error funnel), Connect's own timeout parsing and
// trailer encoding. It answers with the statuses and messages Connect's
// handler gives (with rpc/parse-errors.ts: a body that does not parse is
// INVALID_ARGUMENT on both).

type UnarySpec = MethodImplSpec & { kind: "unary"; method: DescMethodUnary };

export interface GrpcUnaryOptions {
  services: ServiceImplSpec[];
  interceptors: Interceptor[];
  readMaxBytes: number;
  writeMaxBytes: number;
  shutdownSignal: AbortSignal;
}

/** Responses at least this large are gzipped when the client accepts it (Connect's default). */
const COMPRESS_MIN_BYTES = 1024;
const CONTENT_TYPE = "application/grpc+proto";
const gzipAsync = promisify(gzip);
/** The reason a finished call's signal is aborted with: no DOMException and stack per call. */
const COMPLETED = new ConnectError("call completed", Code.Canceled);

/**
 * Returns a function that serves a request when it is a unary gRPC call it
 * can take, and returns false otherwise (the caller hands it to Connect).
 */
export function grpcUnaryHandler(options: GrpcUnaryOptions): (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => boolean {
  const routes = new Map<string, UnarySpec>();
  for (const spec of options.services) {
    for (const method of spec.service.methods) {
      const m = spec.methods[method.localName];
      if (m?.kind === "unary") routes.set(`/${spec.service.typeName}/${method.name}`, m as UnarySpec);
    }
  }
  const live = new Set<AbortController>();
  options.shutdownSignal.addEventListener("abort", () => {
    for (const controller of live) controller.abort(options.shutdownSignal.reason);
  });
  return (req, res) => {
    if (req.method !== "POST") return false;
    const spec = routes.get(req.url);
    if (!spec) return false;
    const type = req.headers["content-type"];
    if (type !== "application/grpc" && type !== CONTENT_TYPE) return false;
    const encoding = req.headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    void serve(spec, req, res, options, live);
    return true;
  };
}

async function serve(
  spec: UnarySpec,
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  options: GrpcUnaryOptions,
  live: Set<AbortController>,
) {
  const timeout = parseTimeout(single(req.headers["grpc-timeout"]) ?? null, Number.MAX_SAFE_INTEGER);
  // One controller per call, where Connect links three: the deadline, the
  // client leaving and the server shutting down (which aborts `live`).
  const controller = new AbortController();
  live.add(controller);
  const onClose = () => controller.abort(new ConnectError("the client closed the call", Code.Canceled));
  req.once("close", onClose);
  const { timeoutMs } = timeout;
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const expire = () => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined) {
    // A deadline already past (grpc-js sends "0m") aborts before the handler runs.
    if (timeoutMs <= 0) expire();
    else timer = setTimeout(expire, timeoutMs);
  }
  const context: HandlerContext = {
    service: spec.method.parent,
    method: spec.method,
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
  let body: Uint8Array | undefined;
  let error: ConnectError | undefined;
  try {
    if (timeout.error) throw timeout.error;
    const input = parse(spec, await readMessage(req, spec, options.readMaxBytes));
    const output = await invokeUnaryImplementation(spec, context, input, options.interceptors);
    const bytes = knownEncoding(output) ?? toBinary(spec.method.output, output);
    if (bytes.byteLength > options.writeMaxBytes) {
      throw new ConnectError(
        `message size ${bytes.byteLength} is larger than configured writeMaxBytes ${options.writeMaxBytes}`,
        Code.ResourceExhausted,
      );
    }
    body = await envelope(bytes, acceptsGzip(req) ? context : undefined);
  } catch (err) {
    error = toError(err);
  } finally {
    req.off("close", onClose);
    if (timer) clearTimeout(timer);
    live.delete(controller);
    // As Connect does, the signal also fires when the call is over.
    controller.abort(COMPLETED);
  }
  respond(res, context, body, error);
}

/** Reads the one enveloped message of a unary call, refusing what Connect refuses. */
function readMessage(req: http2.Http2ServerRequest, spec: UnarySpec, readMaxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const fail = (err: ConnectError) => {
      refused = true;
      // The rest of the body is read and dropped, so the stream can end cleanly.
      chunks.length = 0;
      reject(err);
    };
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      if (size < 5 && size + chunk.length >= 5) {
        const head = size === 0 ? chunk : Buffer.concat([...chunks, chunk]);
        const length = head.readUInt32BE(1);
        if (length > readMaxBytes) {
          fail(new ConnectError(`message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`, Code.ResourceExhausted));
          return;
        }
      }
      size += chunk.length;
      chunks.push(chunk);
    });
    req.once("error", (err) => {
      if (!refused) fail(ConnectError.from(err, Code.Canceled));
    });
    req.once("end", () => {
      if (refused) return;
      const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const kind = spec.method.methodKind;
      if (all.length === 0) return reject(new ConnectError(`protocol error: missing input message for ${kind} method`, Code.Unimplemented));
      if (all.length < 5) return reject(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      const flags = all[0] as number;
      const length = all.readUInt32BE(1);
      if (all.length < 5 + length) return reject(new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument));
      if (all.length > 5 + length) {
        return reject(new ConnectError(`protocol error: received extra input message for ${kind} method`, Code.Unimplemented));
      }
      if (flags & 0x01) return reject(new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal));
      if (flags !== 0) return reject(new ConnectError("unexpected end flag", Code.InvalidArgument));
      resolve(all.subarray(5));
    });
  });
}

async function envelope(bytes: Uint8Array, compressFor: HandlerContext | undefined): Promise<Uint8Array> {
  let payload = bytes;
  let flags = 0;
  if (compressFor && bytes.byteLength >= COMPRESS_MIN_BYTES) {
    payload = await gzipAsync(bytes);
    flags = 1;
    compressFor.responseHeader.set("grpc-encoding", "gzip");
  }
  const out = Buffer.allocUnsafe(5 + payload.byteLength);
  out[0] = flags;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
}

function respond(res: http2.Http2ServerResponse, context: HandlerContext, body: Uint8Array | undefined, error: ConnectError | undefined) {
  if (res.destroyed || res.writableEnded) return;
  const trailer = context.responseTrailer;
  if (error) setTrailerStatus(trailer, error);
  res.writeHead(200, toNodeHeaders(context.responseHeader));
  res.addTrailers(toNodeHeaders(trailer));
  if (body) res.end(body);
  else res.end();
}

/** Undecodable input is the caller's fault: INVALID_ARGUMENT, where Connect says INTERNAL. */
function parse(spec: UnarySpec, bytes: Uint8Array) {
  try {
    return fromBinary(spec.method.input, bytes);
  } catch (err) {
    throw new ConnectError(`parse binary: ${err instanceof Error ? err.message : String(err)}`, Code.InvalidArgument);
  }
}

function toError(err: unknown): ConnectError {
  // The interceptors' error funnel has classified everything the
  // implementation threw; what is left was raised here, outside it.
  if (err instanceof ConnectError) return err;
  return new ConnectError("internal error", Code.Internal, undefined, undefined, err);
}

function acceptsGzip(req: http2.Http2ServerRequest): boolean {
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
