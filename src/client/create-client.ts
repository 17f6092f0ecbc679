import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";

export interface ClientOptions {
  /** Wire protocol. gRPC (HTTP/2) by default; Connect and gRPC-Web also work over HTTP/1.1. */
  protocol?: "grpc" | "connect" | "grpc-web";
  /** HTTP version for Connect and gRPC-Web. gRPC always uses HTTP/2. */
  httpVersion?: "1.1" | "2";
  /** Bearer token sent with every call. */
  token?: string;
  /** Default deadline for unary calls, in milliseconds. Streams have none unless a call sets one. */
  timeoutMs?: number;
  interceptors?: Interceptor[];
}

export type SessionStoreClient = Client<typeof SessionService>;

/** A typed SessionService client for Node.js. */
export function createSessionStoreClient(baseUrl: string, options: ClientOptions = {}): SessionStoreClient {
  return createClient(SessionService, createTransport(baseUrl, options));
}

export type MemoryClient = Client<typeof MemoryService>;

/** A typed MemoryService client; pass the same options (or `createTransport`'s transport) as for sessions. */
export function createMemoryClient(baseUrl: string, options: ClientOptions = {}): MemoryClient {
  return createClient(MemoryService, createTransport(baseUrl, options));
}

export function createTransport(baseUrl: string, options: ClientOptions = {}): Transport {
  const interceptors: Interceptor[] = [...(options.interceptors ?? [])];
  if (options.token) {
    const header = `Bearer ${options.token}`;
    interceptors.unshift((next) => (req) => {
      req.header.set("authorization", header);
      return next(req);
    });
  }
  const common = { baseUrl, interceptors, defaultTimeoutMs: options.timeoutMs };
  switch (options.protocol ?? "grpc") {
    case "grpc":
      return createGrpcTransport(common);
    case "connect":
      return createConnectTransport({ ...common, httpVersion: options.httpVersion ?? "1.1" });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, httpVersion: options.httpVersion ?? "1.1" });
  }
}
