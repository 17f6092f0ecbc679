// The npm package: a typed client, the generated API, and the server for
// embedding in a Node.js process.

export * from "../gen/ts/sessionstore/v1/event_pb.js";
export * from "../gen/ts/sessionstore/v1/history_pb.js";
export * from "../gen/ts/sessionstore/v1/memory_service_pb.js";
export * from "../gen/ts/sessionstore/v1/session_pb.js";
export * from "../gen/ts/sessionstore/v1/session_service_pb.js";
export {
  type ClientOptions,
  createMemoryClient,
  createSessionStoreClient,
  createTransport,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_TIMEOUT_MS,
  type MemoryClient,
  type SessionStoreClient,
} from "./client/create-client.js";
export { defaultRetryPolicy, RETRIED_METHODS, type RetryPolicy } from "./client/retry.js";
export { type Config, defaults as defaultConfig, loadConfig } from "./config/config.js";
export { createLogger, type Logger } from "./log/logger.js";
export { type RunningServer, type StartOptions, startServer } from "./server/server.js";
