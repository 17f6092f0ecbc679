// One JSON line per record on stderr: easy to grep locally and to ship from a
// container without a logging library. Inside a call, while tracing is on,
// each line carries the call's trace, span and request ids.
import { activeTraceFields, tracingEnabled } from "../tracing/tracing.js";

export type Level = "debug" | "info" | "warn" | "error";

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: Level = "info", sink: (line: string) => void = writeStderr): Logger {
  const min = order[level];
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const trace = tracingEnabled() ? activeTraceFields() : undefined;
    sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...trace, ...fields }, replacer));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

export const silentLogger: Logger = createLogger("error", () => {});

function writeStderr(line: string) {
  process.stderr.write(`${line}\n`);
}

function replacer(_key: string, value: unknown) {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
