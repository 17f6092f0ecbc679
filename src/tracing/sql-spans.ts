import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { LogEvent } from "kysely";
import { getTracer } from "./tracing.js";

// One CLIENT span per SQL statement, made from Kysely's query log (which
// reports each statement with its duration, in the caller's async context).
// Only statements run for a traced operation get one: a statement with no
// active span (the feed's idle polls, the health probe) would otherwise be a
// trace of its own every second. The text is the parameterized statement:
// values travel as parameters and are never in it.

const MAX_TEXT = 2048;

export function traceQuery(event: LogEvent): void {
  if (!trace.getActiveSpan()) return;
  const ended = performance.timeOrigin + performance.now();
  const text = event.query.sql;
  // Past leading comments (a prepared statement's name is one, see storage/database.ts).
  const operation = /^(?:\s*\/\*[\s\S]*?\*\/)*\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? "SQL";
  const target = /\b(?:from|into|update|join)\s+"?([a-z_][a-z0-9_]*)"?/i.exec(text)?.[1];
  const summary = target ? `${operation} ${target}` : operation;
  const span = getTracer().startSpan(summary, {
    kind: SpanKind.CLIENT,
    startTime: ended - event.queryDurationMillis,
    attributes: {
      "db.system.name": "postgresql",
      "db.operation.name": operation,
      "db.query.summary": summary,
      "db.query.text": text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text,
      ...(target ? { "db.collection.name": target } : {}),
    },
  });
  if (event.level === "error") {
    const err = event.error;
    const sqlState = typeof err === "object" && err !== null && "code" in err && typeof err.code === "string" ? err.code : undefined;
    if (sqlState) span.setAttribute("db.response.status_code", sqlState);
    span.setAttribute("error.type", sqlState ?? (err instanceof Error ? err.name : "error"));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
  span.end(ended);
}
