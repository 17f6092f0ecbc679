// An unpickled pydantic model as the JSON form ADK stores for it:
// `model_dump(mode="json", exclude_none=True)`. Fields set to None are left
// out (values None inside a dict stay), bytes become URL-safe base64 (pydantic's
// `ser_json_bytes="base64"`, which ADK and google-genai use), enums their value.

import { PickleError, PyGlobal, type PyObject, PySet, PyTuple, type PyValue } from "./pickle.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function toJsonForm(value: PyValue, path = "actions"): Json {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new PickleError(`${path}: ${value} has no JSON form`);
    return value;
  }
  if (typeof value === "bigint") {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new PickleError(`${path}: integer ${value} is outside +-2**53`);
    }
    return Number(value);
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64url") + "=".repeat((3 - (value.length % 3)) % 3);
  if (Array.isArray(value)) return value.map((v, i) => toJsonForm(v, `${path}[${i}]`));
  if (value instanceof PyTuple || value instanceof PySet) return value.items.map((v, i) => toJsonForm(v, `${path}[${i}]`));
  if (value instanceof Map) return dictForm(value, path, false);
  if (value instanceof PyGlobal) throw new PickleError(`${path}: a reference to ${value.qualified} has no JSON form`);
  return objectForm(value, path);
}

function dictForm(map: Map<PyValue, PyValue>, path: string, dropNone: boolean): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [k, v] of map) {
    if (dropNone && v === null) continue;
    const key =
      typeof k === "string" ? k : typeof k === "number" || typeof k === "bigint" || typeof k === "boolean" ? String(k) : undefined;
    if (key === undefined) throw new PickleError(`${path}: a dict key that is not a string`);
    // defineProperty: a key such as "__proto__" stays a plain key.
    Object.defineProperty(out, key, { value: toJsonForm(v, `${path}.${key}`), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// The packages whose models and enums ADK's EventActions hold (google-adk,
// google-genai, and fastapi's OpenAPI models inside auth configs). An instance
// of any other class is refused rather than guessed at.
const MODEL_MODULES = /^(google|fastapi|pydantic)(\.|$)/;

function objectForm(obj: PyObject, path: string): Json {
  const name = obj.cls.qualified;
  if (name === "datetime.datetime" && obj.args[0] instanceof Uint8Array) return isoDatetime(obj.args[0]);
  if (!MODEL_MODULES.test(obj.cls.module)) throw new PickleError(`${path}: cannot read an instance of ${name}`);
  const state = obj.state;
  if (state === undefined) {
    // An enum member pickles as `Class(value)`.
    const [only] = obj.args;
    if (obj.args.length === 1 && (only === null || ["string", "number", "boolean", "bigint"].includes(typeof only))) {
      return toJsonForm(only as PyValue, path);
    }
    throw new PickleError(`${path}: cannot read an instance of ${name}`);
  }
  // BUILD state: a dict, or (dict, slots) for classes with __slots__.
  const [dict, slots] = state instanceof PyTuple ? state.items : [state, null];
  if (!(dict instanceof Map) && dict !== null) throw new PickleError(`${path}: unexpected state of ${name}`);
  if (dict?.has("__dict__")) {
    // pydantic v2: {"__dict__", "__pydantic_extra__", "__pydantic_fields_set__", "__pydantic_private__"}
    const fields = dict.get("__dict__");
    const extra = dict.get("__pydantic_extra__");
    if (!(fields instanceof Map)) throw new PickleError(`${path}: ${name} has no field dict`);
    const out = dictForm(fields, path, true);
    if (extra instanceof Map) Object.assign(out, dictForm(extra, path, true));
    return out;
  }
  const out = dict ? dictForm(dict, path, true) : {};
  if (slots instanceof Map) Object.assign(out, dictForm(slots, path, true));
  return out;
}

function isoDatetime(b: Uint8Array): string {
  if (b.length !== 10) throw new PickleError("a datetime's state must be 10 bytes");
  const n = (i: number) => b[i] as number;
  const pad = (v: number, w = 2) => String(v).padStart(w, "0");
  const micros = (n(7) << 16) | (n(8) << 8) | n(9);
  const base = `${pad((n(0) << 8) | n(1), 4)}-${pad(n(2))}-${pad(n(3))}T${pad(n(4))}:${pad(n(5))}:${pad(n(6))}`;
  return micros ? `${base}.${pad(micros, 6)}` : base;
}
