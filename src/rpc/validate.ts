import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

// Request checks shared by every handler. Each failure names the field and
// the rule, so a client can fix the call without reading server logs.

export const MAX_ID_LENGTH = 128;
export const MAX_NAME_LENGTH = 256;
export const MAX_BRANCH_LENGTH = 1024;
export const MAX_JSON_DEPTH = 32;
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

// C0 and C1 control characters, which no id or name needs and which make
// logs and URLs ambiguous.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** An app name, user id or session id: 1 to 128 printable characters, no padding. */
export function requireId(field: string, value: string): string {
  if (value.length === 0) throw invalid(`${field} must not be empty`);
  checkText(field, value, MAX_ID_LENGTH);
  if (value.trim() !== value) throw invalid(`${field} must not start or end with whitespace`);
  return value;
}

/** Optional text with a length cap and no control characters. */
export function checkText(field: string, value: string, maxLength: number): string {
  if (value.length > maxLength) throw invalid(`${field} is ${value.length} characters long; the limit is ${maxLength}`);
  if (CONTROL.test(value)) throw invalid(`${field} must not contain control characters`);
  if (!value.isWellFormed()) throw invalid(`${field} is not valid Unicode (lone surrogate)`);
  return value;
}

export function checkTimestamp(field: string, ts: Timestamp): Timestamp {
  // The range google.protobuf.Timestamp defines: 0001-01-01 to 9999-12-31.
  if (ts.seconds < -62135596800n || ts.seconds > 253402300799n) throw invalid(`${field} is outside years 1 to 9999`);
  if (ts.nanos < 0 || ts.nanos > 999_999_999) throw invalid(`${field}.nanos must be from 0 to 999999999`);
  return ts;
}

// Stored times are int64 nanoseconds: 1677-09-21T00:12:43.145224192Z to
// 2262-04-11T23:47:16.854775807Z.
export const MIN_STORED_NS = -(2n ** 63n);
export const MAX_STORED_NS = 2n ** 63n - 1n;

/** A time that is stored in a column (an event's timestamp). */
export function checkStoredTimestamp(field: string, ts: Timestamp): Timestamp {
  checkTimestamp(field, ts);
  const ns = ts.seconds * 1_000_000_000n + BigInt(ts.nanos);
  if (ns < MIN_STORED_NS || ns > MAX_STORED_NS) {
    throw invalid(`${field} must be from 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z`);
  }
  return ts;
}

export interface JsonRules {
  /** State lands in jsonb, which cannot hold U+0000. */
  forbidNul: boolean;
}

/**
 * Walks a Struct's JSON: finite numbers only (JSON has no NaN or Infinity),
 * bounded nesting, and, for state, no NUL characters.
 */
export function checkJson(field: string, value: JsonObject | undefined, rules: JsonRules): void {
  if (value === undefined) return;
  walk(field, value, 0, rules);
}

function walk(path: string, value: JsonValue, depth: number, rules: JsonRules): void {
  if (depth > MAX_JSON_DEPTH) throw invalid(`${path} is nested more than ${MAX_JSON_DEPTH} levels deep`);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw invalid(`${path} is ${value}; only finite numbers can be stored`);
  } else if (typeof value === "string") {
    if (rules.forbidNul && value.includes("\u0000")) throw invalid(`${path} contains a NUL character, which state cannot hold`);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(`${path}[${i}]`, value[i] as JsonValue, depth + 1, rules);
  } else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (rules.forbidNul && key.includes("\u0000")) throw invalid(`${path} has a key with a NUL character`);
      walk(`${path}.${shortKey(key)}`, child as JsonValue, depth + 1, rules);
    }
  }
}

/** A key as quoted in an error message: enough to find it, never the whole of a huge one. */
function shortKey(key: string): string {
  return key.length > 40 ? `${key.slice(0, 40)}…` : key;
}

/** 0 means the default; over the maximum is lowered to it (AIP-158). */
export function pageSize(field: string, value: number): number {
  if (value < 0) throw invalid(`${field} must not be negative`);
  if (value === 0) return DEFAULT_PAGE_SIZE;
  return Math.min(value, MAX_PAGE_SIZE);
}
