import { createHash } from "node:crypto";
import { invalid } from "./validate.js";

// Page tokens and stream cursors are opaque to clients: base64url JSON
// holding a position plus a fingerprint of the query, so a token cannot be
// replayed against a different listing or scope.

export function encodeToken(query: readonly string[], position: Record<string, string>): string {
  return tokenEncoder(query)(position);
}

/** An encoder for one query, hashing it once: a tail makes a cursor per delivered event. */
export function tokenEncoder(query: readonly string[]): (position: Record<string, string>) => string {
  const q = fingerprint(query);
  return (position) => Buffer.from(JSON.stringify({ q, ...position })).toString("base64url");
}

/** The position fields of a token, or INVALID_ARGUMENT naming `field`. */
export function decodeToken<K extends string>(
  field: string,
  token: string,
  query: readonly string[],
  keys: readonly K[],
): Record<K, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalid(`${field} is malformed; pass the value the server returned unchanged`);
  }
  if (typeof parsed !== "object" || parsed === null) throw invalid(`${field} is malformed`);
  const record = parsed as Record<string, unknown>;
  if (record.q !== fingerprint(query)) {
    throw invalid(`${field} belongs to a different listing or scope; keep the other request fields unchanged`);
  }
  const out = {} as Record<K, string>;
  for (const key of keys) {
    const value = record[key];
    if (typeof value !== "string") throw invalid(`${field} is malformed`);
    out[key] = value;
  }
  return out;
}

export function parseBigInt(field: string, value: string): bigint {
  if (!/^-?\d{1,20}$/.test(value)) throw invalid(`${field} is malformed`);
  return BigInt(value);
}

function fingerprint(query: readonly string[]): string {
  return createHash("sha256").update(JSON.stringify(query)).digest("base64url").slice(0, 16);
}
