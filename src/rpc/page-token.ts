import { createHash } from "node:crypto";
import { invalid } from "./validate.js";

// Page tokens are opaque to clients: base64url JSON holding the keyset
// position plus a fingerprint of the query, so a token cannot be replayed
// against a different listing.

export function encodePageToken(query: readonly string[], position: Record<string, string>): string {
  return Buffer.from(JSON.stringify({ q: fingerprint(query), ...position })).toString("base64url");
}

/** The position fields of a token, or INVALID_ARGUMENT. */
export function decodePageToken<K extends string>(token: string, query: readonly string[], keys: readonly K[]): Record<K, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalid("page_token is malformed; pass next_page_token from the previous response unchanged");
  }
  if (typeof parsed !== "object" || parsed === null) throw invalid("page_token is malformed");
  const record = parsed as Record<string, unknown>;
  if (record.q !== fingerprint(query))
    throw invalid("page_token belongs to a different listing; keep the other request fields unchanged between pages");
  const out = {} as Record<K, string>;
  for (const key of keys) {
    const value = record[key];
    if (typeof value !== "string") throw invalid("page_token is malformed");
    out[key] = value;
  }
  return out;
}

export function parseBigInt(value: string): bigint {
  if (!/^-?\d{1,20}$/.test(value)) throw invalid("page_token is malformed");
  return BigInt(value);
}

function fingerprint(query: readonly string[]): string {
  return createHash("sha256").update(JSON.stringify(query)).digest("base64url").slice(0, 16);
}
