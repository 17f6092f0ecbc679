import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { type RetryPolicy, unaryCallPolicy } from "./retry.js";
import { baseUrlOf } from "./target.js";

/** Unary calls end after this unless the call or ClientOptions.timeoutMs says otherwise; the same in every client. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The server's default message limit (SESSIONSTORE_MAX_MESSAGE_BYTES). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface ClientOptions {
  /** Wire protocol. gRPC (HTTP/2) by default; Connect and gRPC-Web also work over HTTP/1.1. */
  protocol?: "grpc" | "connect" | "grpc-web";
  /** HTTP version for Connect and gRPC-Web. gRPC always uses HTTP/2. */
  httpVersion?: "1.1" | "2";
  /** Bearer token sent with every call. */
  token?: string;
  /**
   * Deadline of unary calls that set none, in milliseconds, retries
   * included; 0 for none. Streams have none unless a call sets one.
   */
  timeoutMs?: number;
  /** Retries of UNAVAILABLE for the calls in RETRIED_METHODS; `{ maxAttempts: 1 }` turns them off. */
  retry?: RetryPolicy;
  /** Largest message sent or received; keep it in step with the server's. */
  maxMessageBytes?: number;
  /**
   * Ask the server to gzip answers of 1 KiB and more. Off by default, as in
   * grpc-go and grpcio: on loopback or a LAN it costs both sides more CPU
   * than it saves in bytes (a windowed GetSession spends more time in gzip
   * than in the database). Turn it on across slow links.
   */
  gzip?: boolean;
  interceptors?: Interceptor[];
}

export type SessionStoreClient = Client<typeof SessionService>;

/**
 * A typed SessionService client for Node.js. target is the URL the server
 * logs (`http://host:port`, `https://host:port` for TLS) or `host:port`
 * (plaintext to loopback, TLS elsewhere).
 */
export function createSessionStoreClient(target: string, options: ClientOptions = {}): SessionStoreClient {
  return createClient(SessionService, createTransport(target, options));
}

export type MemoryClient = Client<typeof MemoryService>;

/** A typed MemoryService client; pass the same options (or `createTransport`'s transport) as for sessions. */
export function createMemoryClient(baseUrl: string, options: ClientOptions = {}): MemoryClient {
  return createClient(MemoryService, createTransport(baseUrl, options));
}

export function createTransport(target: string, options: ClientOptions = {}): Transport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Outermost, so that the interceptors after it see every try.
  const interceptors: Interceptor[] = [unaryCallPolicy(timeoutMs > 0 ? timeoutMs : undefined, options.retry ?? {})];
  if (options.token) {
    const header = `Bearer ${options.token}`;
    interceptors.push((next) => (req) => {
      req.header.set("authorization", header);
      return next(req);
    });
  }
  interceptors.push(...(options.interceptors ?? []));
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const common = {
    baseUrl: baseUrlOf(target),
    interceptors,
    readMaxBytes: maxBytes,
    writeMaxBytes: maxBytes,
    // Leaving acceptCompression unset would accept gzip and brotli.
    ...(options.gzip ? {} : { acceptCompression: [] }),
  };
  switch (options.protocol ?? "grpc") {
    case "grpc":
      return createGrpcTransport(common);
    case "connect":
      return createConnectTransport({ ...common, httpVersion: options.httpVersion ?? "1.1" });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, httpVersion: options.httpVersion ?? "1.1" });
  }
}
