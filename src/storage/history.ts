// Forks and rewinds: new histories computed from a session's whole log and
// its create-time state (migration 0005), never from a window of it.

import { randomUUID } from "node:crypto";
import { fromBinary, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { type Kysely, sql } from "kysely";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { AlreadyExists, Invalid, Unsupported } from "../domain/outcomes.js";
import { applyDelta, splitState } from "../domain/state.js";
import { nowNs } from "../domain/time.js";
import type { Database } from "./schema.js";
import type { SessionKey } from "./session-store.js";

interface SourceRow {
  pk: bigint;
  state: JsonObject;
  initial_state: JsonObject | null;
  revision: bigint;
}

async function readSource(
  db: Kysely<Database>,
  key: SessionKey,
  cutoff: bigint | undefined,
  lock: boolean,
): Promise<SourceRow | undefined> {
  const row = await db
    .selectFrom("sessions")
    .select(["pk", "state", "initial_state", "revision"])
    .where("app_name", "=", key.appName)
    .where("user_id", "=", key.userId)
    .where("id", "=", key.sessionId)
    .$if(cutoff !== undefined, (qb) => qb.where("update_time_ns", ">=", cutoff as bigint))
    // A fork copies events 1..N in the same transaction; FOR SHARE keeps the
    // session from being deleted under it (appends may go on: 1..N is final).
    .$if(lock, (qb) => qb.forShare())
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.initial_state === null) {
    throw new Unsupported(
      `session "${key.sessionId}" was created before the store kept create-time state (migration 0005); its history cannot be replayed`,
    );
  }
  return row as SourceRow;
}

async function eventBodies(db: Kysely<Database>, pk: bigint, upTo: bigint): Promise<Uint8Array[]> {
  if (upTo === 0n) return [];
  const rows = await db
    .selectFrom("events")
    .select("body")
    .where("session_pk", "=", pk)
    .where("seq", "<=", upTo)
    .orderBy("seq", "asc")
    .execute();
  return rows.map((r) => r.body);
}

/** Create-time state folded with the deltas of `bodies`, prefixed keys as written. */
function fold(initial: JsonObject, bodies: Uint8Array[]): JsonObject {
  const state = applyDelta({}, initial);
  for (const body of bodies) applyDelta(state, fromBinary(EventSchema, body).actions?.stateDelta);
  return state;
}

export interface ForkInput {
  upToSeq?: bigint | undefined;
  newSessionId?: string | undefined;
}

/**
 * Copies events 1..upToSeq of a session (every event when unset) into a new
 * session of the same app and user, in one transaction. The copies keep their
 * ids, seqs, timestamps and stored bytes. Returns undefined when the source
 * does not exist.
 */
export async function forkSession(
  db: Kysely<Database>,
  key: SessionKey,
  input: ForkInput,
  cutoff: bigint | undefined,
): Promise<{ id: string; seq: bigint } | undefined> {
  const id = input.newSessionId ?? randomUUID();
  return db.transaction().execute(async (trx) => {
    const source = await readSource(trx, key, cutoff, true);
    if (!source) return undefined;
    const upTo = input.upToSeq ?? source.revision;
    if (upTo > source.revision) throw new Invalid(`up_to_seq ${upTo} is past the session's last event (seq ${source.revision})`);
    const initial = source.initial_state as JsonObject;
    // app: and user: state is shared by other sessions: the fork takes only
    // the session scope of the fold, and keeps the create-time state so its
    // own history replays the same way.
    const state = splitState(fold(initial, await eventBodies(trx, source.pk, upTo))).session;
    const now = nowNs();
    const inserted = await trx
      .insertInto("sessions")
      .values({
        app_name: key.appName,
        user_id: key.userId,
        id,
        state: JSON.stringify(state),
        initial_state: JSON.stringify(initial),
        revision: upTo,
        create_time_ns: now,
        update_time_ns: now,
        forked_from_id: key.sessionId,
        forked_at_seq: upTo,
      })
      .onConflict((oc) => oc.constraint("sessions_key").doNothing())
      .returning("pk")
      .executeTakeFirst();
    if (!inserted) throw new AlreadyExists(`session "${id}" already exists for app "${key.appName}" and user "${key.userId}"`);
    if (upTo > 0n) {
      await sql`
        INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
        SELECT ${inserted.pk}, seq, event_id, timestamp_ns, body, app_name, user_id
        FROM events WHERE session_pk = ${source.pk} AND seq <= ${upTo}
        ORDER BY seq`.execute(trx);
    }
    return { id, seq: upTo };
  });
}

export interface RewindPlan {
  /** The revision the plan was computed at: append with it as expected revision. */
  revision: bigint;
  /** Session-scope keys back to their values before the invocation (null: did not exist). */
  delta: JsonObject;
}

/**
 * What a rewind to before `invocationId` must write, as ADK computes it
 * (session-scope keys only: app: and user: state is shared), but from the
 * whole log and the create-time state, so keys set at creation or long ago
 * come back too (adk-python #4933). Undefined when the session is missing.
 */
export async function planRewind(
  db: Kysely<Database>,
  key: SessionKey,
  invocationId: string,
  cutoff: bigint | undefined,
): Promise<RewindPlan | undefined> {
  // One row read gives the live state and the revision it belongs to;
  // events up to that revision are final, so no transaction is needed.
  const source = await readSource(db, key, cutoff, false);
  if (!source) return undefined;
  const bodies = await eventBodies(db, source.pk, source.revision);
  const at = bodies.findIndex((body) => fromBinary(EventSchema, body).invocationId === invocationId);
  if (at < 0) throw new Invalid(`rewind_before_invocation_id "${invocationId}" names no event of session "${key.sessionId}"`);
  const before = splitState(fold(source.initial_state as JsonObject, bodies.slice(0, at))).session;
  const current = source.state;
  const delta: JsonObject = {};
  for (const [k, v] of Object.entries(before)) {
    if (!Object.hasOwn(current, k) || !sameJson(current[k], v)) put(delta, k, v);
  }
  for (const k of Object.keys(current)) {
    if (!Object.hasOwn(before, k)) put(delta, k, null);
  }
  return { revision: source.revision, delta };
}

function put(target: JsonObject, key: string, value: JsonValue | undefined): void {
  Object.defineProperty(target, key, { value: value ?? null, enumerable: true, writable: true, configurable: true });
}

/** JSON equality: objects by keys regardless of order, as Python's == compares dicts. */
function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}
