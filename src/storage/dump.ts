import { type Kysely, sql, type Transaction } from "kysely";
import { EVENTS_CHANNEL } from "./channels.js";
import type { Database, JsonRecord } from "./schema.js";

// The store's rows as they are, for `sessionstore export` and `import`: the
// state tables, then sessions (every column but the surrogate key) each with
// its events (protobuf bodies). Reads go by keyset, so memory stays flat
// whatever the size of the store; writes skip what is already there.

export interface AppStateRow {
  app: string;
  state: JsonRecord;
  updateTimeNs: bigint;
}

export interface UserStateRow extends AppStateRow {
  user: string;
}

export interface SessionRow {
  app: string;
  user: string;
  id: string;
  state: JsonRecord;
  revision: bigint;
  createTimeNs: bigint;
  updateTimeNs: bigint;
  initialState: JsonRecord | null;
  forkedFrom: { sessionId: string; seq: bigint } | null;
}

export interface DumpedSession extends SessionRow {
  eventCount: number;
}

export interface EventRow {
  seq: bigint;
  eventId: string;
  timestampNs: bigint;
  body: Uint8Array;
}

export interface DumpScope {
  app?: string | undefined;
  user?: string | undefined;
}

/** Where a dump continues: after this app state, user state or session (in dump order). */
export type DumpPosition =
  | { kind: "start" }
  | { kind: "app_state"; app: string }
  | { kind: "user_state"; app: string; user: string }
  | { kind: "session"; app: string; user: string; id: string };

const PAGE = 500;

export async function* appStates(db: Kysely<Database>, scope: DumpScope, after: DumpPosition): AsyncGenerator<AppStateRow> {
  if (after.kind !== "start" && after.kind !== "app_state") return;
  // User-scoped exports leave app state out: it belongs to every user.
  if (scope.user !== undefined) return;
  let last = after.kind === "app_state" ? after.app : undefined;
  for (;;) {
    let q = db.selectFrom("app_states").select(["app_name", "state", "update_time_ns"]).orderBy("app_name").limit(PAGE);
    if (scope.app !== undefined) q = q.where("app_name", "=", scope.app);
    if (last !== undefined) q = q.where("app_name", ">", last);
    const rows = await q.execute();
    for (const r of rows) yield { app: r.app_name, state: r.state, updateTimeNs: r.update_time_ns };
    if (rows.length < PAGE) return;
    last = rows.at(-1)?.app_name;
  }
}

export async function* userStates(db: Kysely<Database>, scope: DumpScope, after: DumpPosition): AsyncGenerator<UserStateRow> {
  if (after.kind === "session") return;
  let last = after.kind === "user_state" ? ([after.app, after.user] as const) : undefined;
  for (;;) {
    let q = db
      .selectFrom("user_states")
      .select(["app_name", "user_id", "state", "update_time_ns"])
      .orderBy("app_name")
      .orderBy("user_id")
      .limit(PAGE);
    if (scope.app !== undefined) q = q.where("app_name", "=", scope.app);
    if (scope.user !== undefined) q = q.where("user_id", "=", scope.user);
    if (last) q = q.where((eb) => eb(eb.refTuple("app_name", "user_id"), ">", eb.tuple(last?.[0] ?? "", last?.[1] ?? "")));
    const rows = await q.execute();
    for (const r of rows) yield { app: r.app_name, user: r.user_id, state: r.state, updateTimeNs: r.update_time_ns };
    if (rows.length < PAGE) return;
    const end = rows.at(-1);
    if (end) last = [end.app_name, end.user_id];
  }
}

/** Sessions in (app, user, id) order, each with a reader of its events in seq order. */
export async function* sessions(
  db: Kysely<Database>,
  scope: DumpScope,
  after: DumpPosition,
): AsyncGenerator<{ session: DumpedSession; events: () => AsyncGenerator<EventRow> }> {
  let last = after.kind === "session" ? ([after.app, after.user, after.id] as const) : undefined;
  for (;;) {
    let q = db
      .selectFrom("sessions")
      .select([
        "pk",
        "app_name",
        "user_id",
        "id",
        "state",
        "revision",
        "create_time_ns",
        "update_time_ns",
        "initial_state",
        "forked_from_id",
        "forked_at_seq",
      ])
      .select(sql<string>`(SELECT count(*) FROM events e WHERE e.session_pk = sessions.pk)`.as("event_count"))
      .orderBy("app_name")
      .orderBy("user_id")
      .orderBy("id")
      .limit(PAGE);
    if (scope.app !== undefined) q = q.where("app_name", "=", scope.app);
    if (scope.user !== undefined) q = q.where("user_id", "=", scope.user);
    if (last) {
      const [a, u, i] = last;
      q = q.where((eb) => eb(eb.refTuple("app_name", "user_id", "id"), ">", eb.tuple(a, u, i)));
    }
    const rows = await q.execute();
    for (const r of rows) {
      yield {
        session: {
          app: r.app_name,
          user: r.user_id,
          id: r.id,
          state: r.state,
          revision: r.revision,
          createTimeNs: r.create_time_ns,
          updateTimeNs: r.update_time_ns,
          initialState: r.initial_state,
          forkedFrom: r.forked_from_id !== null ? { sessionId: r.forked_from_id, seq: r.forked_at_seq ?? 0n } : null,
          eventCount: Number(r.event_count),
        },
        events: () => eventsOf(db, r.pk),
      };
    }
    if (rows.length < PAGE) return;
    const end = rows.at(-1);
    if (end) last = [end.app_name, end.user_id, end.id];
  }
}

async function* eventsOf(db: Kysely<Database>, pk: bigint): AsyncGenerator<EventRow> {
  let last = 0n;
  for (;;) {
    const rows = await db
      .selectFrom("events")
      .select(["seq", "event_id", "timestamp_ns", "body"])
      .where("session_pk", "=", pk)
      .where("seq", ">", last)
      .orderBy("seq")
      .limit(PAGE)
      .execute();
    for (const r of rows) yield { seq: r.seq, eventId: r.event_id, timestampNs: r.timestamp_ns, body: r.body };
    if (rows.length < PAGE) return;
    last = rows.at(-1)?.seq ?? last;
  }
}

/** Inserts an app's state unless the app already has one; true when written. */
export async function putAppState(db: Kysely<Database>, row: AppStateRow): Promise<boolean> {
  const res = await db
    .insertInto("app_states")
    .values({ app_name: row.app, state: JSON.stringify(row.state), update_time_ns: row.updateTimeNs })
    .onConflict((oc) => oc.column("app_name").doNothing())
    .executeTakeFirst();
  return (res.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function putUserState(db: Kysely<Database>, row: UserStateRow): Promise<boolean> {
  const res = await db
    .insertInto("user_states")
    .values({ app_name: row.app, user_id: row.user, state: JSON.stringify(row.state), update_time_ns: row.updateTimeNs })
    .onConflict((oc) => oc.columns(["app_name", "user_id"]).doNothing())
    .executeTakeFirst();
  return (res.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/**
 * Writes a session and its events in one transaction, so a session is
 * either all there or not at all, and an interrupted import resumes by
 * skipping the sessions it finished. A session that exists is left as it is
 * (false). `events` is read inside the transaction, batch by batch.
 */
export async function putSession(db: Kysely<Database>, row: SessionRow, events: AsyncIterable<EventRow>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto("sessions")
      .values({
        app_name: row.app,
        user_id: row.user,
        id: row.id,
        state: JSON.stringify(row.state),
        revision: row.revision,
        create_time_ns: row.createTimeNs,
        update_time_ns: row.updateTimeNs,
        ...(row.initialState !== null ? { initial_state: JSON.stringify(row.initialState) } : {}),
        ...(row.forkedFrom ? { forked_from_id: row.forkedFrom.sessionId, forked_at_seq: row.forkedFrom.seq } : {}),
      })
      .onConflict((oc) => oc.columns(["app_name", "user_id", "id"]).doNothing())
      .returning("pk")
      .executeTakeFirst();
    let batch: EventRow[] = [];
    const flush = async (into: Transaction<Database>, pk: bigint) => {
      if (batch.length === 0) return;
      await into
        .insertInto("events")
        .values(
          batch.map((e) => ({
            session_pk: pk,
            seq: e.seq,
            event_id: e.eventId,
            timestamp_ns: e.timestampNs,
            body: e.body,
            app_name: row.app,
            user_id: row.user,
          })),
        )
        .onConflict((oc) => oc.columns(["session_pk", "event_id"]).doNothing())
        .execute();
      batch = [];
    };
    for await (const event of events) {
      if (!inserted) continue; // read past them all the same: the input is one stream
      batch.push(event);
      if (batch.length >= PAGE) await flush(trx, inserted.pk);
    }
    if (!inserted) return false;
    await flush(trx, inserted.pk);
    // Tails on running servers read new rows when told (see stream/hub.ts).
    await sql`SELECT pg_notify(${EVENTS_CHANNEL}, '')`.execute(trx);
    return true;
  });
}
