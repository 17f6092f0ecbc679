import type { JsonObject } from "@bufbuild/protobuf";

// ADK's state scopes. The prefix picks where a key is stored and how long it
// lives: `app:` for every user of an app, `user:` for one user's sessions,
// no prefix for one session, `temp:` for the current invocation only.
export const APP_PREFIX = "app:";
export const USER_PREFIX = "user:";
export const TEMP_PREFIX = "temp:";

/** A delta or an initial state split by scope, prefixes removed. */
export interface ScopedState {
  session: JsonObject;
  user: JsonObject;
  app: JsonObject;
}

export function splitState(state: JsonObject | undefined): ScopedState {
  const scoped: ScopedState = { session: {}, user: {}, app: {} };
  if (!state) return scoped;
  for (const [key, value] of Object.entries(state)) {
    if (value === undefined) continue;
    if (key.startsWith(APP_PREFIX)) put(scoped.app, key.slice(APP_PREFIX.length), value);
    else if (key.startsWith(USER_PREFIX)) put(scoped.user, key.slice(USER_PREFIX.length), value);
    else if (!key.startsWith(TEMP_PREFIX)) put(scoped.session, key, value);
  }
  return scoped;
}

// An own property even for "__proto__" (as in "user:__proto__"), which plain
// assignment would turn into the object's prototype and lose.
function put(target: JsonObject, key: string, value: JsonObject[string]): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The delta as it is stored on the event: everything but `temp:` keys. */
export function withoutTemp(state: JsonObject): JsonObject {
  const kept: JsonObject = {};
  for (const [key, value] of Object.entries(state)) {
    if (!key.startsWith(TEMP_PREFIX)) put(kept, key, value);
  }
  return kept;
}

export function isEmpty(state: JsonObject): boolean {
  for (const _ in state) return false;
  return true;
}

/** What readers see: session keys as stored, app and user keys re-prefixed. */
export function mergeState(session: JsonObject, app: JsonObject | null | undefined, user: JsonObject | null | undefined): JsonObject {
  const merged: JsonObject = {};
  for (const [key, value] of Object.entries(session)) put(merged, key, value);
  if (app) for (const [key, value] of Object.entries(app)) put(merged, APP_PREFIX + key, value);
  if (user) for (const [key, value] of Object.entries(user)) put(merged, USER_PREFIX + key, value);
  return merged;
}

/**
 * Applies a delta as appends do (`state || delta`): each key replaces the
 * whole value, a null is kept as a value. Changes `state` in place.
 */
export function applyDelta(state: JsonObject, delta: JsonObject | undefined): JsonObject {
  if (delta) for (const [key, value] of Object.entries(delta)) put(state, key, value);
  return state;
}
