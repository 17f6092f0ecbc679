import type { JsonValue } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

/** UTC with milliseconds: what server logs use, unambiguous at 2 a.m. in any zone. */
export function time(ts: Timestamp | undefined): string {
  if (!ts) return "";
  return timestampDate(ts).toISOString().replace("T", " ").replace("Z", "");
}

export function relative(ts: Timestamp | undefined, now = Date.now()): string {
  if (!ts) return "";
  const s = Math.round((now - timestampDate(ts).getTime()) / 1000);
  if (s < 60) return `${Math.max(s, 0)}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export function pretty(value: JsonValue | undefined): string {
  return value === undefined ? "undefined" : JSON.stringify(value, null, 2);
}

/** One line, cut at `max` characters. */
export function compact(value: JsonValue | undefined, max = 120): string {
  const s = value === undefined ? "" : JSON.stringify(value);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A stable hue per author, so agents keep their colour across sessions. */
export function hue(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return (h >>> 0) % 360;
}

export type Scope = "app" | "user" | "session";

export function scopeOf(key: string): Scope {
  return key.startsWith("app:") ? "app" : key.startsWith("user:") ? "user" : "session";
}
