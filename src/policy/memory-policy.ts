// The "memory" section of an app's policy (MemoryService):
//
//   { "apps": { "support": { "memory": { "ttlSeconds": 31536000, "textConfig": "english" } } } }

export interface MemoryPolicy {
  /** Entries stored longer ago than this read as gone and are swept. Undefined: kept until deleted. */
  ttlSeconds: number | undefined;
  /**
   * PostgreSQL text search configuration for new entries and queries. `simple`
   * (the default) lowercases and splits words, for any language; `english`
   * and the others stem. A change applies to entries stored afterwards and to
   * every query; entries stored before keep the words they were indexed with.
   */
  textConfig: string;
  /** Whether DeleteSession also deletes the entries derived from that session. */
  deleteWithSession: boolean;
  /** Largest entry: protobuf size of its content plus JSON size of its metadata. */
  maxMemoryBytes: number;
  /** Most entries one user may have in the app. */
  maxMemoriesPerUser: number;
}

export const DEFAULT_MEMORY_POLICY: MemoryPolicy = {
  ttlSeconds: undefined,
  textConfig: "simple",
  deleteWithSession: true,
  maxMemoryBytes: 64 * 1024,
  maxMemoriesPerUser: 100_000,
};

const KEYS = ["ttlSeconds", "textConfig", "deleteWithSession", "maxMemoryBytes", "maxMemoriesPerUser"];

/** `fail` builds the policy's error (app-policy.ts imports this file, not the other way round). */
export function mergeMemoryPolicy(base: MemoryPolicy, raw: unknown, at: string, fail: (message: string) => Error): MemoryPolicy {
  if (raw === undefined) return base;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw fail(`${at} must be an object`);
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) if (!KEYS.includes(key)) throw fail(`${at} has an unknown field "${key}"`);
  const out: MemoryPolicy = { ...base };
  if (r.ttlSeconds !== undefined) out.ttlSeconds = r.ttlSeconds === null ? undefined : positive(r.ttlSeconds, `${at}.ttlSeconds`);
  if (r.textConfig !== undefined) {
    // A name, not SQL: it is passed as a parameter and cast to regconfig.
    if (typeof r.textConfig !== "string" || !/^[a-z_][a-z0-9_]{0,62}$/.test(r.textConfig)) {
      throw fail(`${at}.textConfig must be a text search configuration name such as "simple" or "english"`);
    }
    out.textConfig = r.textConfig;
  }
  if (r.deleteWithSession !== undefined) {
    if (typeof r.deleteWithSession !== "boolean") throw fail(`${at}.deleteWithSession must be true or false`);
    out.deleteWithSession = r.deleteWithSession;
  }
  if (r.maxMemoryBytes !== undefined) out.maxMemoryBytes = positive(r.maxMemoryBytes, `${at}.maxMemoryBytes`);
  if (r.maxMemoriesPerUser !== undefined) out.maxMemoriesPerUser = positive(r.maxMemoriesPerUser, `${at}.maxMemoriesPerUser`);
  return out;

  function positive(value: unknown, field: string): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) throw fail(`${field} must be a positive integer`);
    return value;
  }
}
