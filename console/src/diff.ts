import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

export interface Change {
  key: string;
  kind: "added" | "removed" | "changed";
  before?: JsonValue | undefined;
  after?: JsonValue | undefined;
}

/** Keys whose values differ between two states, by key. */
export function diffState(before: JsonObject, after: JsonObject): Change[] {
  const changes: Change[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of [...keys].sort()) {
    const had = Object.hasOwn(before, key);
    const has = Object.hasOwn(after, key);
    if (had && !has) changes.push({ key, kind: "removed", before: before[key] });
    else if (!had && has) changes.push({ key, kind: "added", after: after[key] });
    else if (!equal(before[key], after[key])) {
      changes.push({ key, kind: "changed", before: before[key], after: after[key] });
    }
  }
  return changes;
}

export function equal(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => equal(v, b[i]));
  }
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
}
