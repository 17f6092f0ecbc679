import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

// Bearer tokens. The configuration holds only SHA-256 hashes, so a leaked
// config file or environment dump grants nothing. A presented token is
// hashed and looked up; comparing hashes instead of secrets also keeps the
// lookup's timing independent of the secret.

export interface TokenGrant {
  /** For logs; never the secret. */
  name: string;
  /** App names this token may use; "*" for every app. */
  apps: ReadonlySet<string> | "*";
  /** When set, only this user's sessions and state. */
  user: string | undefined;
  readOnly: boolean;
  /** Powers beyond apps: "metrics" may scrape GET /metrics. */
  scopes: ReadonlySet<TokenScope>;
}

/** What a token may do besides calling RPCs on its apps. */
export const TOKEN_SCOPES = ["metrics"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export class TokenConfigError extends Error {}

export class TokenStore {
  readonly #byHash: Map<string, TokenGrant>;

  constructor(entries: Map<string, TokenGrant>) {
    this.#byHash = entries;
  }

  get size(): number {
    return this.#byHash.size;
  }

  /** The grant of a presented token, or undefined. */
  lookup(token: string): TokenGrant | undefined {
    return this.#byHash.get(hashToken(token));
  }
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A new random token: 32 bytes, base64url, with a prefix that secret scanners recognise. */
export function newToken(): string {
  return `sst_${randomBytes(32).toString("base64url")}`;
}

/**
 * Parses `{"tokens": [{"name", "sha256", "apps", "user"?, "readOnly"?, "scopes"?}]}` (or
 * the bare list) from SESSIONSTORE_TOKENS, else from SESSIONSTORE_TOKENS_FILE.
 */
export function loadTokens(json: string | undefined, file: string | undefined): TokenStore {
  const text = json ?? (file ? readFileSync(file, "utf8") : undefined);
  const entries = new Map<string, TokenGrant>();
  if (text === undefined) return new TokenStore(entries);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TokenConfigError(`tokens are not valid JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(raw) ? raw : typeof raw === "object" && raw !== null ? (raw as { tokens?: unknown }).tokens : undefined;
  if (!Array.isArray(list)) throw new TokenConfigError('tokens must be a list, or an object with a "tokens" list');
  list.forEach((item, i) => {
    const at = `tokens[${i}]`;
    if (typeof item !== "object" || item === null) throw new TokenConfigError(`${at} must be an object`);
    const t = item as Record<string, unknown>;
    for (const key of Object.keys(t)) {
      if (!["name", "sha256", "apps", "user", "readOnly", "scopes"].includes(key)) {
        throw new TokenConfigError(`${at} has an unknown field "${key}"${key === "token" ? ": store only the sha256 of a token" : ""}`);
      }
    }
    if (typeof t.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(t.sha256))
      throw new TokenConfigError(`${at}.sha256 must be 64 lowercase hex digits`);
    if (entries.has(t.sha256)) throw new TokenConfigError(`${at}.sha256 appears twice`);
    if (
      t.scopes !== undefined &&
      !(Array.isArray(t.scopes) && t.scopes.every((s) => typeof s === "string" && (TOKEN_SCOPES as readonly string[]).includes(s)))
    )
      throw new TokenConfigError(`${at}.scopes must be a list of: ${TOKEN_SCOPES.join(", ")}`);
    const scopes = new Set((t.scopes ?? []) as TokenScope[]);
    let apps: ReadonlySet<string> | "*";
    if (t.apps === "*") apps = "*";
    // A token for a scope alone (a Prometheus scraper's) grants no app.
    else if (t.apps === undefined && scopes.size > 0) apps = new Set();
    else if (Array.isArray(t.apps) && t.apps.length > 0 && t.apps.every((a) => typeof a === "string" && a !== ""))
      apps = new Set(t.apps as string[]);
    else
      throw new TokenConfigError(`${at}.apps must be "*" or a non-empty list of app names (it may be left out only when scopes are given)`);
    if (t.user !== undefined && (typeof t.user !== "string" || t.user === ""))
      throw new TokenConfigError(`${at}.user must be a non-empty string`);
    if (t.readOnly !== undefined && typeof t.readOnly !== "boolean") throw new TokenConfigError(`${at}.readOnly must be true or false`);
    entries.set(t.sha256, {
      name: typeof t.name === "string" && t.name !== "" ? t.name : `token ${i + 1}`,
      apps,
      user: t.user as string | undefined,
      readOnly: t.readOnly === true,
      scopes,
    });
  });
  return new TokenStore(entries);
}
