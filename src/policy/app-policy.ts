import { readFileSync } from "node:fs";
import { nowNs } from "../domain/time.js";
import { DEFAULT_MEMORY_POLICY, type MemoryPolicy, mergeMemoryPolicy } from "./memory-policy.js";

// Per-app rules the server enforces on every write and read: retention,
// redaction and size caps. One JSON document, from a file or the
// environment:
//
//   { "defaults": { "ttlSeconds": 2592000, "limits": { "maxEventBytes": 1048576 } },
//     "apps": { "support": { "redaction": { "custom": [{ "name": "ticket", "pattern": "TCK-\\d{6}" }] } } } }
//
// An app's entry overrides the defaults field by field.

export const DETECTOR_NAMES = ["email", "phone", "card", "iban", "ssn", "jwt", "apiKey"] as const;
export type DetectorName = (typeof DETECTOR_NAMES)[number];

export interface CustomPattern {
  name: string;
  /** A JavaScript regular expression source; matched globally and case-sensitively unless it sets flags inline. */
  pattern: string;
  /** Defaults to `[NAME]` in upper case. */
  replacement?: string;
}

export interface RedactionPolicy {
  enabled: boolean;
  detectors: DetectorName[];
  custom: CustomPattern[];
}

export interface Limits {
  maxEventsPerSession: number;
  /** Protobuf size of one event. */
  maxEventBytes: number;
  /** JSON size of each state scope (session, user, app) after a write. */
  maxStateBytes: number;
  /** Share of a limit at which a warning is logged. */
  warnRatio: number;
}

export interface AppPolicy {
  /** Sessions not updated for this long read as NOT_FOUND and are swept. Undefined: kept forever. */
  ttlSeconds: number | undefined;
  redaction: RedactionPolicy;
  limits: Limits;
  /** MemoryService: retention, text search configuration, caps (memory-policy.ts). */
  memory: MemoryPolicy;
}

export const DEFAULT_LIMITS: Limits = {
  maxEventsPerSession: 100_000,
  maxEventBytes: 4 * 1024 * 1024,
  maxStateBytes: 1024 * 1024,
  warnRatio: 0.8,
};

export const DEFAULT_POLICY: AppPolicy = {
  ttlSeconds: undefined,
  redaction: { enabled: true, detectors: [...DETECTOR_NAMES], custom: [] },
  limits: DEFAULT_LIMITS,
  memory: DEFAULT_MEMORY_POLICY,
};

export class PolicyError extends Error {}

/** Updated before this instant means expired, for a time-to-live of `ttlSeconds` (undefined: never). */
export function expiryCutoff(ttlSeconds: number | undefined, now: bigint = nowNs()): bigint | undefined {
  return ttlSeconds === undefined ? undefined : now - BigInt(ttlSeconds) * 1_000_000_000n;
}

/** The policy of every app: the defaults, with per-app overrides. */
export class PolicySet {
  readonly defaults: AppPolicy;
  readonly #apps: Map<string, AppPolicy>;

  constructor(defaults: AppPolicy = DEFAULT_POLICY, apps: Map<string, AppPolicy> = new Map()) {
    this.defaults = defaults;
    this.#apps = apps;
  }

  for(appName: string): AppPolicy {
    return this.#apps.get(appName) ?? this.defaults;
  }

  /**
   * The app's retention cutoff: sessions last updated before this instant
   * are expired, and every read (and tail) treats them as gone at once,
   * whether or not the sweeper has deleted them yet. The one place it is
   * computed.
   */
  liveSince(appName: string, now: bigint = nowNs()): bigint | undefined {
    return expiryCutoff(this.for(appName).ttlSeconds, now);
  }

  /** Apps with their own entry (the sweeper treats them one by one). */
  get overridden(): [string, AppPolicy][] {
    return [...this.#apps];
  }
}

export function loadPolicy(json: string | undefined, file: string | undefined): PolicySet {
  const text = json ?? (file ? readFileSync(file, "utf8") : undefined);
  if (text === undefined) return new PolicySet();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new PolicyError(`policy is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(raw)) throw new PolicyError("policy must be a JSON object");
  const defaults = mergePolicy(DEFAULT_POLICY, raw.defaults, "defaults");
  const apps = new Map<string, AppPolicy>();
  if (raw.apps !== undefined) {
    if (!isObject(raw.apps)) throw new PolicyError("policy.apps must be an object keyed by app name");
    for (const [name, entry] of Object.entries(raw.apps)) apps.set(name, mergePolicy(defaults, entry, `apps.${name}`));
  }
  for (const key of Object.keys(raw)) {
    if (key !== "defaults" && key !== "apps") throw new PolicyError(`policy has an unknown field "${key}"`);
  }
  return new PolicySet(defaults, apps);
}

function mergePolicy(base: AppPolicy, raw: unknown, at: string): AppPolicy {
  if (raw === undefined) return base;
  if (!isObject(raw)) throw new PolicyError(`${at} must be an object`);
  allowOnly(raw, ["ttlSeconds", "redaction", "limits", "memory"], at);
  let ttlSeconds = base.ttlSeconds;
  if (raw.ttlSeconds !== undefined) {
    ttlSeconds = raw.ttlSeconds === null ? undefined : positive(raw.ttlSeconds, `${at}.ttlSeconds`);
  }
  return {
    ttlSeconds,
    redaction: mergeRedaction(base.redaction, raw.redaction, `${at}.redaction`),
    limits: mergeLimits(base.limits, raw.limits, `${at}.limits`),
    memory: mergeMemoryPolicy(base.memory, raw.memory, `${at}.memory`, (message) => new PolicyError(message)),
  };
}

function mergeRedaction(base: RedactionPolicy, raw: unknown, at: string): RedactionPolicy {
  if (raw === undefined) return base;
  if (!isObject(raw)) throw new PolicyError(`${at} must be an object`);
  allowOnly(raw, ["enabled", "detectors", "custom"], at);
  const out: RedactionPolicy = { ...base };
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled !== "boolean") throw new PolicyError(`${at}.enabled must be true or false`);
    out.enabled = raw.enabled;
  }
  if (raw.detectors !== undefined) {
    if (!Array.isArray(raw.detectors)) throw new PolicyError(`${at}.detectors must be a list`);
    out.detectors = raw.detectors.map((d) => {
      if (!(DETECTOR_NAMES as readonly unknown[]).includes(d))
        throw new PolicyError(`${at}.detectors: unknown detector ${JSON.stringify(d)}; known: ${DETECTOR_NAMES.join(", ")}`);
      return d as DetectorName;
    });
  }
  if (raw.custom !== undefined) {
    if (!Array.isArray(raw.custom)) throw new PolicyError(`${at}.custom must be a list`);
    out.custom = raw.custom.map((c, i) => {
      if (!isObject(c) || typeof c.name !== "string" || typeof c.pattern !== "string") {
        throw new PolicyError(`${at}.custom[${i}] needs a "name" and a "pattern"`);
      }
      try {
        new RegExp(c.pattern, "gu");
      } catch (err) {
        throw new PolicyError(`${at}.custom[${i}].pattern is not a valid regular expression: ${(err as Error).message}`);
      }
      if (c.replacement !== undefined && typeof c.replacement !== "string")
        throw new PolicyError(`${at}.custom[${i}].replacement must be a string`);
      return { name: c.name, pattern: c.pattern, ...(typeof c.replacement === "string" ? { replacement: c.replacement } : {}) };
    });
  }
  return out;
}

function mergeLimits(base: Limits, raw: unknown, at: string): Limits {
  if (raw === undefined) return base;
  if (!isObject(raw)) throw new PolicyError(`${at} must be an object`);
  allowOnly(raw, ["maxEventsPerSession", "maxEventBytes", "maxStateBytes", "warnRatio"], at);
  const out: Limits = { ...base };
  if (raw.maxEventsPerSession !== undefined) out.maxEventsPerSession = positive(raw.maxEventsPerSession, `${at}.maxEventsPerSession`);
  if (raw.maxEventBytes !== undefined) out.maxEventBytes = positive(raw.maxEventBytes, `${at}.maxEventBytes`);
  if (raw.maxStateBytes !== undefined) out.maxStateBytes = positive(raw.maxStateBytes, `${at}.maxStateBytes`);
  if (raw.warnRatio !== undefined) {
    if (typeof raw.warnRatio !== "number" || !(raw.warnRatio > 0 && raw.warnRatio <= 1))
      throw new PolicyError(`${at}.warnRatio must be in (0, 1]`);
    out.warnRatio = raw.warnRatio;
  }
  return out;
}

function positive(value: unknown, at: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) throw new PolicyError(`${at} must be a positive integer`);
  return value;
}

function allowOnly(raw: Record<string, unknown>, keys: string[], at: string): void {
  for (const key of Object.keys(raw)) if (!keys.includes(key)) throw new PolicyError(`${at} has an unknown field "${key}"`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
