import {
  choice,
  integer,
  type OptionSet,
  optionalInteger,
  parseOptions,
  renderHelp,
  text,
  textWithDefault,
  toggle,
  UsageError,
  type Values,
} from "../cli/options.js";
import type { Level } from "../log/logger.js";

/** A configuration value that is wrong (a flag or variable that does not parse). Exit code 2. */
export class ConfigError extends UsageError {}

const LEVELS = ["debug", "info", "warn", "error"] as const satisfies readonly Level[];

// The server's options, in the order of the README's Configuration table
// (generated from this list by scripts/options-table.ts).
export const serverOptions = {
  host: textWithDefault("host", "127.0.0.1", "address to listen on", { env: "SESSIONSTORE_HOST", valueName: "ADDRESS" }),
  port: integer("port", 50051, 0, 65535, "port (`0` picks a free one)", { env: "SESSIONSTORE_PORT" }),
  databaseUrl: text("database-url", "`postgres://user:pass@host:5432/db`; unset = embedded store", {
    env: "DATABASE_URL",
    valueName: "URL",
  }),
  dataDir: textWithDefault("data-dir", "./data", "folder of the embedded store (`memory://` keeps it in memory); one process at a time", {
    env: "SESSIONSTORE_DATA_DIR",
    valueName: "DIR",
  }),
  poolSize: integer("pool-size", 20, 1, 1000, "PostgreSQL connections", { env: "SESSIONSTORE_POOL_SIZE" }),
  appendBatches: integer("append-batches", 1, 1, 64, "group-commit batches of appends in flight at once (see Operations)", {
    env: "SESSIONSTORE_APPEND_BATCHES",
  }),
  shutdownGraceMs: integer("shutdown-grace-ms", 10_000, 0, 600_000, "how long in-flight calls may finish after SIGTERM", {
    env: "SESSIONSTORE_SHUTDOWN_GRACE_MS",
    valueName: "MS",
  }),
  maxMessageBytes: integer(
    "max-message-bytes",
    16 * 1024 * 1024,
    1024,
    1 << 30,
    "largest request or response (over it: `RESOURCE_EXHAUSTED`)",
    {
      env: "SESSIONSTORE_MAX_MESSAGE_BYTES",
      valueName: "BYTES",
    },
  ),
  logLevel: choice("log-level", LEVELS, "info", "`debug`, `info`, `warn`, `error` (JSON lines on stderr)", {
    env: "SESSIONSTORE_LOG_LEVEL",
    valueName: "LEVEL",
  }),
  heartbeatMs: integer("heartbeat-ms", 15_000, 50, 300_000, "heartbeat of idle tails when the request sets none", {
    env: "SESSIONSTORE_HEARTBEAT_MS",
    valueName: "MS",
  }),
  tailBuffer: integer("tail-buffer", 1000, 1, 1_000_000, "events a slow tail buffers before it re-reads from the table", {
    env: "SESSIONSTORE_TAIL_BUFFER",
  }),
  feedPollMs: integer("feed-poll-ms", 1000, 10, 60_000, "safety-net poll of the live feed", {
    env: "SESSIONSTORE_FEED_POLL_MS",
    valueName: "MS",
  }),
  tokens: text(
    "tokens",
    "bearer token hashes and scopes as JSON ([SECURITY.md](SECURITY.md)); unset (and no file) = no authentication, loopback only",
    {
      env: "SESSIONSTORE_TOKENS",
      valueName: "JSON",
    },
  ),
  tokensFile: text("tokens-file", "file holding the token hashes (`sessionstore token` makes entries)", {
    env: "SESSIONSTORE_TOKENS_FILE",
    valueName: "FILE",
  }),
  insecureNoAuth: toggle("insecure-no-auth", "allow no tokens on a non-loopback address", { env: "SESSIONSTORE_INSECURE_NO_AUTH" }),
  policy: text("policy", "per-app retention (`ttlSeconds`), redaction and size limits as JSON ([SECURITY.md](SECURITY.md))", {
    env: "SESSIONSTORE_POLICY",
    valueName: "JSON",
  }),
  policyFile: text("policy-file", "file holding the per-app policy", { env: "SESSIONSTORE_POLICY_FILE", valueName: "FILE" }),
  sweepIntervalMs: integer("sweep-interval-ms", 60_000, 100, 86_400_000, "how often expired sessions are deleted", {
    env: "SESSIONSTORE_SWEEP_INTERVAL_MS",
    valueName: "MS",
  }),
  tlsCert: text("tls-cert", "PEM certificate chain; with `--tls-key` the port speaks TLS only (HTTP/2 and HTTP/1.1 by ALPN)", {
    env: "SESSIONSTORE_TLS_CERT",
    valueName: "FILE",
  }),
  tlsKey: text("tls-key", "PEM private key of `--tls-cert`", { env: "SESSIONSTORE_TLS_KEY", valueName: "FILE" }),
  headersTimeoutMs: integer(
    "headers-timeout-ms",
    20_000,
    100,
    3_600_000,
    "a new connection's TLS handshake or HTTP/2 preface, and each HTTP/1.1 request's headers, must arrive within this; else the connection is closed",
    { env: "SESSIONSTORE_HEADERS_TIMEOUT_MS", valueName: "MS" },
  ),
  requestTimeoutMs: integer(
    "request-timeout-ms",
    300_000,
    100,
    3_600_000,
    "a request's body must arrive within this after its headers (HTTP/1.1: the connection is closed; HTTP/2: the stream is reset); responses, tails included, are not limited",
    { env: "SESSIONSTORE_REQUEST_TIMEOUT_MS", valueName: "MS" },
  ),
  idleTimeoutMs: integer(
    "idle-timeout-ms",
    300_000,
    100,
    86_400_000,
    "an HTTP/2 connection with no call open is closed (GOAWAY) after this; gRPC clients reconnect by themselves",
    { env: "SESSIONSTORE_IDLE_TIMEOUT_MS", valueName: "MS" },
  ),
  metricsPort: optionalInteger(
    "metrics-port",
    0,
    65535,
    "also serve `GET /metrics`, and nothing else, on this port (plain HTTP/1.1, same token rule; see [Metrics](#metrics)); `0` picks a free one",
    { env: "SESSIONSTORE_METRICS_PORT" },
  ),
  metricsHost: textWithDefault(
    "metrics-host",
    "127.0.0.1",
    "address of the metrics port; without tokens, only a loopback address (or `SESSIONSTORE_INSECURE_NO_AUTH`)",
    { env: "SESSIONSTORE_METRICS_HOST", valueName: "ADDRESS" },
  ),
} satisfies OptionSet;

export type Config = Values<typeof serverOptions> & { logLevel: Level };

export const defaults: Config = Object.fromEntries(Object.entries(serverOptions).map(([key, option]) => [key, option.default])) as Config;

/** The options of commands that open the database themselves (migrate, doctor, export, import). */
export const databaseOptions = {
  databaseUrl: serverOptions.databaseUrl,
  dataDir: serverOptions.dataDir,
  poolSize: serverOptions.poolSize,
} satisfies OptionSet;

/** Environment first, then flags (`--port 8080` or `--port=8080`), which win. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = []): Config {
  const parsed = parseOptions(serverOptions, argv, env, { onValueError: (err) => new ConfigError(err.message) });
  if (parsed.help) throw new ConfigError(usage());
  return parsed.values;
}

export function usage(): string {
  return renderHelp(
    "usage: sessionstore serve [options]",
    "Serves the API (gRPC, gRPC-Web, Connect) and the web console on one port. Flags win over environment variables.",
    serverOptions,
  );
}
