import type { Level } from "../log/logger.js";

export interface Config {
  host: string;
  port: number;
  /** Unset: the embedded PGlite store in `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Connections in the Postgres pool. */
  poolSize: number;
  /** Group-commit transactions of appends in flight at once. */
  appendBatches: number;
  /** How long in-flight calls may run after SIGTERM before they are cut. */
  shutdownGraceMs: number;
  /** Largest request or response message, in bytes. */
  maxMessageBytes: number;
  logLevel: Level;
  /** Heartbeat interval of idle StreamEvents tails, unless the request sets one. */
  heartbeatMs: number;
  /** Events one tail may hold in memory before it re-reads from the table. */
  tailBuffer: number;
  /** How often the live feed looks for new rows even without a notification. */
  feedPollMs: number;
  /** Bearer tokens (hashes) as JSON, or a file holding them. */
  tokens: string | undefined;
  tokensFile: string | undefined;
  /** Per-app retention, redaction and limits as JSON, or a file holding it. */
  policy: string | undefined;
  policyFile: string | undefined;
  /** Serve without tokens on a non-loopback address. */
  insecureNoAuth: boolean;
  /** PEM files for TLS; both or neither. */
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** How often expired sessions are swept. */
  sweepIntervalMs: number;
  /** How long a new connection may take to start, and an HTTP/1.1 request to send its headers. */
  headersTimeoutMs: number;
  /** How long an HTTP/1.1 request may take to send its body. */
  requestTimeoutMs: number;
  /** How long an HTTP/2 connection without an open call is kept. */
  idleTimeoutMs: number;
  /** A second port serving only `/metrics` (plain HTTP); unset: only the main port serves it. */
  metricsPort: number | undefined;
  /** Address of the metrics port. */
  metricsHost: string;
}

interface Option {
  env: string;
  flag: string;
  key: keyof Config;
  parse: (raw: string) => Config[keyof Config];
  help: string;
}

const options: Option[] = [
  { env: "SESSIONSTORE_HOST", flag: "--host", key: "host", parse: nonEmpty("SESSIONSTORE_HOST"), help: "address to listen on" },
  {
    env: "SESSIONSTORE_PORT",
    flag: "--port",
    key: "port",
    parse: integer("SESSIONSTORE_PORT", 0, 65535),
    help: "port (0 picks a free one)",
  },
  {
    env: "DATABASE_URL",
    flag: "--database-url",
    key: "databaseUrl",
    parse: nonEmpty("DATABASE_URL"),
    help: "postgres:// URL; unset = embedded store",
  },
  {
    env: "SESSIONSTORE_DATA_DIR",
    flag: "--data-dir",
    key: "dataDir",
    parse: nonEmpty("SESSIONSTORE_DATA_DIR"),
    help: "embedded store folder",
  },
  {
    env: "SESSIONSTORE_POOL_SIZE",
    flag: "--pool-size",
    key: "poolSize",
    parse: integer("SESSIONSTORE_POOL_SIZE", 1, 1000),
    help: "Postgres connections",
  },
  {
    env: "SESSIONSTORE_APPEND_BATCHES",
    flag: "--append-batches",
    key: "appendBatches",
    parse: integer("SESSIONSTORE_APPEND_BATCHES", 1, 64),
    help: "group-commit transactions of appends in flight at once",
  },
  {
    env: "SESSIONSTORE_SHUTDOWN_GRACE_MS",
    flag: "--shutdown-grace-ms",
    key: "shutdownGraceMs",
    parse: integer("SESSIONSTORE_SHUTDOWN_GRACE_MS", 0, 600_000),
    help: "grace period for in-flight calls on shutdown",
  },
  {
    env: "SESSIONSTORE_MAX_MESSAGE_BYTES",
    flag: "--max-message-bytes",
    key: "maxMessageBytes",
    parse: integer("SESSIONSTORE_MAX_MESSAGE_BYTES", 1024, 1 << 30),
    help: "largest message accepted or sent",
  },
  {
    env: "SESSIONSTORE_HEARTBEAT_MS",
    flag: "--heartbeat-ms",
    key: "heartbeatMs",
    parse: integer("SESSIONSTORE_HEARTBEAT_MS", 50, 300_000),
    help: "default heartbeat of idle tails",
  },
  {
    env: "SESSIONSTORE_TAIL_BUFFER",
    flag: "--tail-buffer",
    key: "tailBuffer",
    parse: integer("SESSIONSTORE_TAIL_BUFFER", 1, 1_000_000),
    help: "events a slow tail may buffer",
  },
  {
    env: "SESSIONSTORE_FEED_POLL_MS",
    flag: "--feed-poll-ms",
    key: "feedPollMs",
    parse: integer("SESSIONSTORE_FEED_POLL_MS", 10, 60_000),
    help: "live feed safety-net poll",
  },
  {
    env: "SESSIONSTORE_TOKENS",
    flag: "--tokens",
    key: "tokens",
    parse: nonEmpty("SESSIONSTORE_TOKENS"),
    help: "bearer token hashes as JSON (see SECURITY.md)",
  },
  {
    env: "SESSIONSTORE_TOKENS_FILE",
    flag: "--tokens-file",
    key: "tokensFile",
    parse: nonEmpty("SESSIONSTORE_TOKENS_FILE"),
    help: "file with bearer token hashes",
  },
  {
    env: "SESSIONSTORE_POLICY",
    flag: "--policy",
    key: "policy",
    parse: nonEmpty("SESSIONSTORE_POLICY"),
    help: "per-app retention, redaction and limits as JSON",
  },
  {
    env: "SESSIONSTORE_POLICY_FILE",
    flag: "--policy-file",
    key: "policyFile",
    parse: nonEmpty("SESSIONSTORE_POLICY_FILE"),
    help: "file with the per-app policy",
  },
  {
    env: "SESSIONSTORE_INSECURE_NO_AUTH",
    flag: "--insecure-no-auth",
    key: "insecureNoAuth",
    parse: bool("SESSIONSTORE_INSECURE_NO_AUTH"),
    help: "allow no tokens on a non-loopback address",
  },
  {
    env: "SESSIONSTORE_TLS_CERT",
    flag: "--tls-cert",
    key: "tlsCert",
    parse: nonEmpty("SESSIONSTORE_TLS_CERT"),
    help: "PEM certificate chain file",
  },
  { env: "SESSIONSTORE_TLS_KEY", flag: "--tls-key", key: "tlsKey", parse: nonEmpty("SESSIONSTORE_TLS_KEY"), help: "PEM private key file" },
  {
    env: "SESSIONSTORE_SWEEP_INTERVAL_MS",
    flag: "--sweep-interval-ms",
    key: "sweepIntervalMs",
    parse: integer("SESSIONSTORE_SWEEP_INTERVAL_MS", 100, 86_400_000),
    help: "how often expired sessions are deleted",
  },
  {
    env: "SESSIONSTORE_HEADERS_TIMEOUT_MS",
    flag: "--headers-timeout-ms",
    key: "headersTimeoutMs",
    parse: integer("SESSIONSTORE_HEADERS_TIMEOUT_MS", 100, 3_600_000),
    help: "time to start a connection and send HTTP/1.1 headers",
  },
  {
    env: "SESSIONSTORE_REQUEST_TIMEOUT_MS",
    flag: "--request-timeout-ms",
    key: "requestTimeoutMs",
    parse: integer("SESSIONSTORE_REQUEST_TIMEOUT_MS", 100, 3_600_000),
    help: "time to send an HTTP/1.1 request body",
  },
  {
    env: "SESSIONSTORE_IDLE_TIMEOUT_MS",
    flag: "--idle-timeout-ms",
    key: "idleTimeoutMs",
    parse: integer("SESSIONSTORE_IDLE_TIMEOUT_MS", 100, 86_400_000),
    help: "close HTTP/2 connections without calls after this",
  },
  {
    env: "SESSIONSTORE_METRICS_PORT",
    flag: "--metrics-port",
    key: "metricsPort",
    parse: integer("SESSIONSTORE_METRICS_PORT", 0, 65535),
    help: "also serve /metrics alone on this port (plain HTTP)",
  },
  {
    env: "SESSIONSTORE_METRICS_HOST",
    flag: "--metrics-host",
    key: "metricsHost",
    parse: nonEmpty("SESSIONSTORE_METRICS_HOST"),
    help: "address of the metrics port",
  },
  { env: "SESSIONSTORE_LOG_LEVEL", flag: "--log-level", key: "logLevel", parse: logLevel, help: "debug, info, warn or error" },
];

export const defaults: Config = {
  host: "127.0.0.1",
  port: 50051,
  databaseUrl: undefined,
  dataDir: "./data",
  poolSize: 20,
  appendBatches: 1,
  shutdownGraceMs: 10_000,
  maxMessageBytes: 16 * 1024 * 1024,
  logLevel: "info",
  heartbeatMs: 15_000,
  tailBuffer: 1000,
  feedPollMs: 1000,
  tokens: undefined,
  tokensFile: undefined,
  policy: undefined,
  policyFile: undefined,
  insecureNoAuth: false,
  tlsCert: undefined,
  tlsKey: undefined,
  sweepIntervalMs: 60_000,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 300_000,
  idleTimeoutMs: 300_000,
  metricsPort: undefined,
  metricsHost: "127.0.0.1",
};

export class ConfigError extends Error {}

/** Environment first, then flags (`--port 8080` or `--port=8080`), which win. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = []): Config {
  const config: Config = { ...defaults };
  const set = (option: Option, raw: string) => {
    (config as unknown as Record<string, unknown>)[option.key] = option.parse(raw);
  };
  for (const option of options) {
    const raw = env[option.env];
    if (raw !== undefined && raw !== "") set(option, raw);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--help" || arg === "-h") throw new ConfigError(usage());
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const option = options.find((o) => o.flag === flag);
    if (!option) throw new ConfigError(`unknown argument ${arg}\n${usage()}`);
    // A switch given alone means "on".
    const raw = inline ?? (option.key === "insecureNoAuth" ? "true" : argv[++i]);
    if (raw === undefined) throw new ConfigError(`${flag} needs a value`);
    set(option, raw);
  }
  return config;
}

export function usage(): string {
  const lines = options.map((o) => `  ${`${o.flag} / ${o.env}`.padEnd(52)} ${o.help}`);
  return `usage: sessionstore [flags]\n${lines.join("\n")}`;
}

function nonEmpty(name: string) {
  return (raw: string) => {
    if (raw.trim() === "") throw new ConfigError(`${name} must not be empty`);
    return raw;
  };
}

function integer(name: string, min: number, max: number) {
  return (raw: string) => {
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || n < min || n > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  };
}

function bool(name: string) {
  return (raw: string) => {
    if (["1", "true", "yes"].includes(raw.toLowerCase())) return true;
    if (["0", "false", "no"].includes(raw.toLowerCase())) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  };
}

function logLevel(raw: string): Level {
  if (raw === "debug" || raw === "info" || raw === "warn" || raw === "error") return raw;
  throw new ConfigError(`SESSIONSTORE_LOG_LEVEL must be debug, info, warn or error, got "${raw}"`);
}
