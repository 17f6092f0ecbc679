import { randomUUID } from "node:crypto";
import { create, fromBinary, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { type Kysely, sql, type Transaction } from "kysely";
import { type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { AlreadyExists, Invalid, NotFound, OverLimit, Stale, Unavailable, Unsupported } from "../domain/outcomes.js";
import { applyDelta, isEmpty, mergeState, type ScopedState, splitState } from "../domain/state.js";
import { nowNs, nsToTimestamp, timestampToNs } from "../domain/time.js";
import type { Logger } from "../log/logger.js";
import { type Limits, PolicySet } from "../policy/app-policy.js";
import { DELETED_CHANNEL } from "./channels.js";
import { preparedComment } from "./database.js";
import { GroupCommit, type Outcome } from "./group-commit.js";
import { type ForkInput, forkSession, planRewind } from "./history.js";
import { isConnectionLoss, isConnectRefused, sqlState } from "./pg-errors.js";
import {
  type EventPageRow,
  eventPageQuery,
  runRead,
  type SessionListRow,
  type SessionRow,
  type SessionWindowRow,
  sessionPageQuery,
  sessionWindowQuery,
} from "./read-queries.js";
import type { Database } from "./schema.js";
import { type CommittedEvent, NO_OBSERVER, type StoreObserver } from "./store-observer.js";
import { type SweepScope, sweepScopeFilter } from "./sweep-scope.js";

export interface SessionKey {
  appName: string;
  userId: string;
  sessionId: string;
}

/** A session row with its scoped state as stored (prefixes removed). */
export interface StoredSession {
  appName: string;
  userId: string;
  id: string;
  sessionState: JsonObject;
  appState: JsonObject;
  userState: JsonObject;
  revision: bigint;
  createTimeNs: bigint;
  updateTimeNs: bigint;
  /** Set on a session made by ForkSession (read by getSession). */
  forkedFrom?: { sessionId: string; seq: bigint } | undefined;
}

/** An event as read, with its stored protobuf encoding. */
export interface StoredEvent {
  event: Event;
  body: Uint8Array;
}

export interface EventWindow {
  /** Undefined: all events. */
  numRecent?: number | undefined;
  /** Inclusive lower bound on the event timestamp. */
  afterNs?: bigint | undefined;
}

export interface ListSessionsQuery {
  appName: string;
  /** Undefined: every user of the app. */
  userId?: string | undefined;
  limit: number;
  /** Keyset position: the last session of the previous page. */
  after?: { updateTimeNs: bigint; id: string; userId: string } | undefined;
  /** Most recently updated first: the same order, backwards. */
  newestFirst?: boolean | undefined;
}

export interface AppendInput {
  key: SessionKey;
  /** Validated; `id` may be empty, `timestamp` unset, the delta without `temp:` keys. */
  event: Event;
  delta: ScopedState;
  expectedRevision?: bigint | undefined;
}

export interface AppendResult {
  event: Event;
  /** The stored protobuf encoding of `event`. */
  eventBytes: Uint8Array;
  revision: bigint;
  updateTimeNs: bigint;
  duplicate: boolean;
}

/** An append waiting for group commit, its event id already fixed. */
interface PendingAppend {
  input: AppendInput;
  eventId: string;
}

export interface ListEventsQuery {
  key: SessionKey;
  limit: number;
  descending: boolean;
  /** Exclusive: continue after (ascending) or before (descending) this seq. */
  cursorSeq?: bigint | undefined;
}

/** A missing session, as every RPC words it. */
// Rewinds that keep losing races with appends give up after this many tries.
const REWIND_ATTEMPTS = 10;

export const notFound = (key: SessionKey) =>
  new NotFound(`session "${key.sessionId}" not found for app "${key.appName}" and user "${key.userId}"`);

/**
 * Every query of the service, written once for both backends: the embedded
 * PGlite store and PostgreSQL run the same SQL.
 */
export interface StoreOptions {
  /** Retention and size limits per app. */
  policies?: PolicySet;
  logger?: Logger;
  /** Told of every committed append and deletion (the stream hub). */
  observer?: StoreObserver;
  /**
   * Group-commit transactions of appends in flight at once (default 1).
   * One is fastest on few cores: batches then grow with the load, and each
   * costs the database one commit.
   */
  appendBatches?: number;
  /** Told of each group-commit batch of appends: its size and each append's wait for it, in ms (metrics). */
  onAppendBatch?: (size: number, waitsMs: readonly number[]) => void;
}

export class SessionStore {
  readonly #db: Kysely<Database>;
  readonly #policies: PolicySet;
  readonly #logger: Logger | undefined;
  readonly #observer: StoreObserver;
  readonly #warned = new Map<string, number>();
  readonly #appends: GroupCommit<PendingAppend, AppendResult>;
  /** Appends answered so far, by the append function's outcome ("ok", "duplicate", "stale", ...), for metrics. */
  readonly appendOutcomes = new Map<string, number>();
  /** Events written to the log so far: appended ones and the copies a fork makes (for metrics). */
  eventsStored = 0;

  constructor(db: Kysely<Database>, options: StoreOptions = {}) {
    this.#db = db;
    this.#policies = options.policies ?? new PolicySet();
    this.#logger = options.logger;
    this.#observer = options.observer ?? NO_OBSERVER;
    this.#appends = new GroupCommit((batch) => this.#appendBatch(batch), {
      maxBatches: options.appendBatches ?? 1,
      maxBatchSize: 128,
      onBatch: options.onAppendBatch,
      name: "sessionstore.append_batch",
      // One write per user or app state in a batch: they are written last,
      // in key order, so that batches cannot deadlock on them. Appends to one
      // session may share a batch; they run in order.
      keys: ({ input: { key, delta } }) => {
        const keys: string[] = [];
        if (!isEmpty(delta.user)) keys.push(`u\u0000${key.appName}\u0000${key.userId}`);
        if (!isEmpty(delta.app)) keys.push(`a\u0000${key.appName}`);
        return keys;
      },
    });
  }

  private get db(): Kysely<Database> {
    return this.#db;
  }

  /** The apps' policies; their `liveSince` is the one retention cutoff. */
  get policies(): PolicySet {
    return this.#policies;
  }

  #limits(appName: string): Limits {
    return this.#policies.for(appName).limits;
  }

  /** Refuses a write past a cap (nothing is written: the transaction rolls back) and warns near it. */
  #checkLimit(
    key: { appName: string; userId: string; sessionId: string },
    limit: keyof Omit<Limits, "warnRatio">,
    value: number,
    what: string,
  ): void {
    const limits = this.#limits(key.appName);
    const max = limits[limit];
    if (value > max) {
      throw new OverLimit(`${what} would be ${value}, over the limit ${limit} = ${max}; nothing was written`, limit, value, max);
    }
    if (value >= max * limits.warnRatio) {
      // At most one warning per session and limit a minute: a session near its
      // cap is written to on every turn.
      const id = `${key.appName}\u0000${key.userId}\u0000${key.sessionId}\u0000${limit}`;
      const now = Date.now();
      if ((this.#warned.get(id) ?? 0) + 60_000 > now) return;
      if (this.#warned.size > 10_000) this.#warned.clear();
      this.#warned.set(id, now);
      this.#logger?.warn("session is approaching a limit", { ...key, limit, value, max });
    }
  }

  async createSession(
    key: { appName: string; userId: string; sessionId?: string | undefined },
    initial: ScopedState,
    /** An imported session's own creation time; it also starts its update time. */
    createTimeNs?: bigint,
  ): Promise<StoredSession> {
    const id = key.sessionId ?? randomUUID();
    const now = nowNs();
    const created = createTimeNs ?? now;
    const cutoff = this.#policies.liveSince(key.appName);
    const purged: bigint[] = [];
    const result = await this.db.transaction().execute(async (trx) => {
      if (cutoff !== undefined && key.sessionId !== undefined) {
        // An expired session no longer exists for readers; free its id too.
        const { rows } = await sql<{ pk: bigint }>`
          WITH d AS (
            DELETE FROM sessions
            WHERE app_name = ${key.appName} AND user_id = ${key.userId} AND id = ${id} AND update_time_ns < ${cutoff}
            RETURNING pk
          )
          SELECT pk, pg_notify(${DELETED_CHANNEL}, pk::text)::text AS notified FROM d`.execute(trx);
        purged.push(...rows.map((r) => r.pk));
      }
      const full = { ...key, sessionId: id };
      // DO NOTHING (not an error) so a racing create waits for the winner and
      // then sees no row, without aborting the transaction.
      const inserted = await trx
        .insertInto("sessions")
        .values({
          app_name: key.appName,
          user_id: key.userId,
          id,
          state: JSON.stringify(initial.session),
          // Kept apart for replay (sessionAsOf): the live state moves on.
          initial_state: JSON.stringify(mergeState(initial.session, initial.app, initial.user)),
          create_time_ns: created,
          update_time_ns: created,
        })
        .onConflict((oc) => oc.constraint("sessions_key").doNothing())
        .returning(["revision", sql<number>`octet_length(state::text)`.as("bytes")])
        .executeTakeFirst();
      if (!inserted) {
        throw new AlreadyExists(`session "${id}" already exists for app "${key.appName}" and user "${key.userId}"`);
      }
      this.#checkLimit(full, "maxStateBytes", Number(inserted.bytes), SCOPE_SIZE.session);
      const user = await writeUserState(trx, key.appName, key.userId, initial.user, now);
      if (user) this.#checkLimit(full, "maxStateBytes", user.bytes, SCOPE_SIZE.user);
      const app = await writeAppState(trx, key.appName, initial.app, now);
      if (app) this.#checkLimit(full, "maxStateBytes", app.bytes, SCOPE_SIZE.app);
      const userState = user?.state ?? (await readUserState(trx, key.appName, key.userId));
      const appState = app?.state ?? (await readAppState(trx, key.appName));
      return {
        appName: key.appName,
        userId: key.userId,
        id,
        sessionState: initial.session,
        appState,
        userState,
        revision: inserted.revision,
        createTimeNs: created,
        updateTimeNs: created,
      };
    });
    for (const pk of purged) this.#observer.deleted(pk);
    return result;
  }

  /** One statement, one round trip (read-queries.ts). */
  async getSession(key: SessionKey, window: EventWindow): Promise<{ session: StoredSession; events: StoredEvent[] } | undefined> {
    const rows = await runRead<SessionWindowRow>(this.db, sessionWindowQuery(key, this.#policies.liveSince(key.appName), window));
    const row = rows[0];
    if (!row) return undefined;
    const events: StoredEvent[] = [];
    for (let i = 1; i < rows.length; i++) events.push(storedEvent((rows[i] as SessionWindowRow).body as Uint8Array));
    return { session: toStoredSession(row), events };
  }

  /**
   * The session as it was right after its event `asOfSeq` (0: as created):
   * its create-time state folded with the deltas of events 1..asOfSeq, in
   * seq order. One read of those events, so the cost grows with asOfSeq and
   * not with the rest of the session. Scoped keys (`app:`, `user:`) are the
   * ones this session wrote; what other sessions wrote to the shared scopes
   * in between is not in any of this session's rows. The events returned are
   * those of 1..asOfSeq within `window`.
   */
  async sessionAsOf(
    key: SessionKey,
    asOfSeq: bigint,
    window: EventWindow,
  ): Promise<{ session: StoredSession; state: JsonObject; events: StoredEvent[] } | undefined> {
    const cutoff = this.#policies.liveSince(key.appName);
    const row = await this.db
      .selectFrom("sessions")
      .select(["pk", "app_name", "user_id", "id", "state", "initial_state", "revision", "create_time_ns", "update_time_ns"])
      .where("app_name", "=", key.appName)
      .where("user_id", "=", key.userId)
      .where("id", "=", key.sessionId)
      .$if(cutoff !== undefined, (qb) => qb.where("update_time_ns", ">=", cutoff as bigint))
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.initial_state === null) {
      throw new Unsupported(
        `session "${key.sessionId}" was created before the store kept create-time state (migration 0005); its past states cannot be replayed`,
      );
    }
    if (asOfSeq > row.revision) {
      throw new Invalid(`as_of_seq ${asOfSeq} is past the session's last event (seq ${row.revision})`);
    }
    // Events up to a seq at or below the revision read above are committed
    // and never change: no transaction is needed for a consistent fold.
    const rows = asOfSeq === 0n ? [] : await replayQuery(this.db, row.pk, asOfSeq).execute();
    // Fewer rows: the session was deleted (and maybe recreated) meanwhile.
    if (BigInt(rows.length) !== asOfSeq) return undefined;
    const state = applyDelta({}, row.initial_state as JsonObject);
    const events = rows.map((r) => storedEvent(r.body));
    for (const { event } of events) applyDelta(state, event.actions?.stateDelta);
    const session = toStoredSession({ ...row, app_state: null, user_state: null });
    return { session, state, events: inWindow(events, window) };
  }

  /** A copy of events 1..upToSeq in a new session (see history.ts); undefined when the source is missing. */
  async forkSession(key: SessionKey, input: ForkInput): Promise<StoredSession | undefined> {
    const forked = await forkSession(this.db, key, input, this.#policies.liveSince(key.appName));
    if (!forked) return undefined;
    // The copies are new rows of the log: wide tails deliver them.
    this.eventsStored += Number(forked.seq);
    if (forked.seq > 0n) this.#observer.appended();
    return (await this.getSession({ ...key, sessionId: forked.id }, { numRecent: 0 }))?.session;
  }

  /**
   * Appends the event that undoes `invocationId` and everything after it
   * (see history.ts). Without an expected revision, a rewind that loses a race
   * with another append is computed again from the newer log.
   */
  async rewindSession(key: SessionKey, invocationId: string, expectedRevision: bigint | undefined): Promise<AppendResult> {
    for (let attempt = 1; ; attempt++) {
      const plan = await planRewind(this.db, key, invocationId, this.#policies.liveSince(key.appName));
      if (!plan) throw notFound(key);
      const event = create(EventSchema, {
        invocationId: `e-${randomUUID()}`,
        author: "user",
        actions: { rewindBeforeInvocationId: invocationId, stateDelta: plan.delta },
      });
      try {
        return await this.appendEvent({ key, event, delta: splitState(plan.delta), expectedRevision: expectedRevision ?? plan.revision });
      } catch (error) {
        if (!(error instanceof Stale) || expectedRevision !== undefined || attempt >= REWIND_ATTEMPTS) throw error;
      }
    }
  }

  /** One statement, one round trip (read-queries.ts). */
  async listSessions(q: ListSessionsQuery): Promise<StoredSession[]> {
    const rows = await runRead<SessionListRow>(this.db, sessionPageQuery({ ...q, cutoff: this.#policies.liveSince(q.appName) }));
    return rows.map((row) => toStoredSession(row));
  }

  /**
   * The deleted session's primary key, or undefined when there was none. The
   * same statement tells other replicas, so their tails of it end.
   */
  async deleteSession(key: SessionKey): Promise<bigint | undefined> {
    const { rows } = await sql<{ pk: bigint }>`
      WITH d AS (
        DELETE FROM sessions WHERE app_name = ${key.appName} AND user_id = ${key.userId} AND id = ${key.sessionId} RETURNING pk
      )
      SELECT pk, pg_notify(${DELETED_CHANNEL}, pk::text)::text AS notified FROM d`.execute(this.db);
    const pk = rows[0]?.pk;
    if (pk !== undefined) this.#observer.deleted(pk);
    return pk;
  }

  /**
   * Erasure: every session (with its events), the user state and the
   * LangGraph threads of one user in one app, in one transaction.
   */
  async eraseUser(appName: string, userId: string): Promise<{ sessions: number; events: bigint }> {
    const deleted = await this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pk: bigint; revision: bigint }>`
        WITH d AS (DELETE FROM sessions WHERE app_name = ${appName} AND user_id = ${userId} RETURNING pk, revision)
        SELECT pk, revision, pg_notify(${DELETED_CHANNEL}, pk::text)::text AS notified FROM d`.execute(trx);
      await trx.deleteFrom("user_states").where("app_name", "=", appName).where("user_id", "=", userId).execute();
      // The user's LangGraph threads (checkpoints, values, writes) go with them.
      await sql`DELETE FROM checkpoint_threads WHERE app_name = ${appName} AND user_id = ${userId}`.execute(trx);
      return rows;
    });
    for (const row of deleted) this.#observer.deleted(row.pk);
    return { sessions: deleted.length, events: deleted.reduce((sum, r) => sum + r.revision, 0n) };
  }

  /**
   * Deletes up to `batch` sessions of an app (or of every app but `except`)
   * last updated before `cutoff`. SKIP LOCKED lets replicas sweep at the same
   * time without waiting on each other or on live appends.
   */
  async sweepExpired(scope: SweepScope, cutoff: bigint, batch: number): Promise<number> {
    const where = sweepScopeFilter(scope);
    const { rows } = await sql<{ pk: bigint }>`
      WITH expired AS (
        SELECT pk FROM sessions WHERE ${where} AND update_time_ns < ${cutoff}
        ORDER BY update_time_ns LIMIT ${batch} FOR UPDATE SKIP LOCKED
      ),
      d AS (DELETE FROM sessions s USING expired WHERE s.pk = expired.pk RETURNING s.pk)
      SELECT pk, pg_notify(${DELETED_CHANNEL}, pk::text)::text AS notified FROM d`.execute(this.db);
    for (const row of rows) this.#observer.deleted(row.pk);
    return rows.length;
  }

  /** The session's primary key, or undefined when it does not exist. */
  async sessionPk(key: SessionKey): Promise<bigint | undefined> {
    const cutoff = this.#policies.liveSince(key.appName);
    const row = await this.db
      .selectFrom("sessions")
      .select("pk")
      .where("app_name", "=", key.appName)
      .where("user_id", "=", key.userId)
      .where("id", "=", key.sessionId)
      .$if(cutoff !== undefined, (qb) => qb.where("update_time_ns", ">=", cutoff as bigint))
      .executeTakeFirst();
    return row?.pk;
  }

  /**
   * Appends go through group commit: under load, concurrent appends share
   * one statement and one transaction (see group-commit.ts). Each one's
   * outcome is what it would have been on its own.
   */
  appendEvent(input: AppendInput): Promise<AppendResult> {
    // The id is fixed before the first attempt, so an append that runs again
    // (its batch failed as a whole) finds its own earlier copy.
    return this.#appends.submit({ input, eventId: input.event.id || randomUUID() });
  }

  async #appendBatch(batch: PendingAppend[]): Promise<Outcome<AppendResult>[]> {
    try {
      return await this.#appendTogether(batch);
    } catch (error) {
      // Nothing of the batch was written. When the function names the append
      // whose write passed a state cap, that append alone is refused and the
      // others run again together: a batch writes each user and app state at
      // most once, and appends to one session run in order, so they do not
      // depend on the refused one beyond what the rerun recomputes.
      const over = stateOverLimit(error);
      const refusedAt = over ? over.index : -1;
      const refusedKey = batch[refusedAt]?.input.key;
      if (over && refusedKey) {
        const refused = settleNow<AppendResult>(() => {
          this.#checkLimit(refusedKey, "maxStateBytes", over.bytes, SCOPE_SIZE[over.scope]);
          throw new Error(`append: ${over.scope} state of ${over.bytes} bytes reported over its limit`);
        });
        const rest = batch.length > 1 ? await this.#appendBatch(batch.filter((_, i) => i !== refusedAt)) : [];
        return [...rest.slice(0, refusedAt), refused, ...rest.slice(refusedAt)];
      }
      // The database went away: no use trying each one on its own now, and
      // whether the batch committed is unknown unless no connection was had.
      if (isConnectionLoss(error)) return batch.map((pending) => ({ ok: false, error: lostAppend(pending, error) }));
      if (batch.length === 1) return [{ ok: false, error }];
      // Anything else (a lost connection, a conflict): each append runs on
      // its own, in order, and gets its own answer.
      const outcomes: Outcome<AppendResult>[] = [];
      for (const pending of batch) {
        // Through #appendBatch: one that passes a state cap is refused as such, not failed.
        outcomes.push(...(await this.#appendBatch([pending])));
      }
      return outcomes;
    }
  }

  /**
   * Appends in one call of the sessionstore_append function (migration
   * 0004): one statement, one round trip, one implicit transaction.
   * Refusals (not found, stale, over a limit) are outcomes of their own
   * append only; an error thrown from here means nothing was written.
   */
  async #appendTogether(batch: PendingAppend[]): Promise<Outcome<AppendResult>[]> {
    // The request's own event becomes the stored one (no copy): seq and a
    // server timestamp are filled in from the function's answer.
    const events = batch.map(({ input: { event }, eventId }) => {
      event.id = eventId;
      event.seq = 0n;
      return event;
    });
    const bodies = events.map((e) => toBinary(EventSchema, e));
    const limits = batch.map((p) => this.#limits(p.input.key.appName));
    const json = (delta: JsonObject) => (isEmpty(delta) ? null : JSON.stringify(delta));
    const keys = batch.map((p) => p.input.key);
    const { rows } = await sql<AppendRow>`${sql.raw(APPEND_PREPARED)}
        SELECT * FROM sessionstore_append(
          ${keys.map((k) => k.appName)}::text[], ${keys.map((k) => k.userId)}::text[], ${keys.map((k) => k.sessionId)}::text[],
          ${batch.map((p) => p.eventId)}::text[], ${batch.map((p) => p.input.expectedRevision ?? null)}::bigint[],
          ${bodies}::bytea[],
          ${events.map((e) => (e.timestamp ? timestampToNs(e.timestamp) : null))}::bigint[],
          ${nowNs()}::bigint, ${keys.map((k) => this.#policies.liveSince(k.appName) ?? null)}::bigint[],
          ${batch.map((p) => json(p.input.delta.session))}::jsonb[], ${batch.map((p) => json(p.input.delta.user))}::jsonb[],
          ${batch.map((p) => json(p.input.delta.app))}::jsonb[],
          ${limits.map((l) => BigInt(l.maxEventsPerSession))}::bigint[], ${limits.map((l) => l.maxEventBytes)}::int[],
          ${limits.map((l) => l.maxStateBytes)}::int[]
        )`.execute(this.db);
    if (rows.length !== batch.length) throw new Error(`append: ${rows.length} outcomes for ${batch.length} appends`);
    const committed: CommittedEvent[] = [];
    rows.forEach((row, i) => {
      this.appendOutcomes.set(row.o_outcome, (this.appendOutcomes.get(row.o_outcome) ?? 0) + 1);
      const key = keys[i] as SessionKey;
      if (row.o_outcome === "ok")
        committed.push({ appName: key.appName, userId: key.userId, sessionId: key.sessionId, seq: row.o_seq ?? 0n });
    });
    this.eventsStored += committed.length;
    if (committed.length > 0) this.#observer.appended(committed);
    return rows.map((row, i) =>
      settleNow(() => this.#outcome(batch[i] as PendingAppend, events[i] as Event, bodies[i] as Uint8Array, row)),
    );
  }

  /** What one row of sessionstore_append means for its caller; throws refusals as typed outcomes. */
  #outcome(pending: PendingAppend, event: Event, body: Uint8Array, row: AppendRow): AppendResult {
    const { key, expectedRevision } = pending.input;
    const revision = row.o_revision ?? 0n;
    switch (row.o_outcome) {
      case "not_found":
        throw notFound(key);
      case "duplicate":
        return {
          event: decodeEvent(row.o_existing as Uint8Array),
          eventBytes: row.o_existing as Uint8Array,
          revision,
          updateTimeNs: row.o_update_time_ns ?? 0n,
          duplicate: true,
        };
      case "stale":
        throw new Stale(
          `session "${key.sessionId}" was modified in storage: expected revision ${expectedRevision}, current revision ${revision}; reload the session and retry`,
          expectedRevision ?? 0n,
          revision,
        );
      case "too_many_events":
      case "event_too_big":
      case "ok":
        // Over a cap this throws RESOURCE_EXHAUSTED; near one it warns.
        this.#checkLimit(key, "maxEventsPerSession", Number(row.o_seq), "the session's event count");
        this.#checkLimit(key, "maxEventBytes", row.o_event_bytes ?? 0, "the event's size in bytes");
        if (row.o_state_bytes) this.#checkLimit(key, "maxStateBytes", row.o_state_bytes, SCOPE_SIZE.session);
        if (row.o_user_bytes) this.#checkLimit(key, "maxStateBytes", row.o_user_bytes, SCOPE_SIZE.user);
        if (row.o_app_bytes) this.#checkLimit(key, "maxStateBytes", row.o_app_bytes, SCOPE_SIZE.app);
        if (row.o_outcome !== "ok") throw new Error(`append: outcome ${row.o_outcome} within the limits`);
        {
          // What the function appended to the stored body, appended here too
          // (protobuf fields may come in any order): the stored bytes, without
          // reading them back.
          const assigned = create(EventSchema, { seq: row.o_seq ?? 0n });
          if (!event.timestamp) assigned.timestamp = event.timestamp = nsToTimestamp(row.o_timestamp_ns ?? 0n);
          event.seq = assigned.seq;
          const eventBytes = Buffer.concat([body, toBinary(EventSchema, assigned)]);
          return { event, eventBytes, revision, updateTimeNs: row.o_update_time_ns ?? 0n, duplicate: false };
        }
      default:
        throw new Error(`append: unknown outcome ${row.o_outcome}`);
    }
  }

  /** Undefined when the session does not exist. One statement, one round trip (read-queries.ts). */
  async listEvents(q: ListEventsQuery): Promise<StoredEvent[] | undefined> {
    const rows = await runRead<EventPageRow>(this.db, eventPageQuery(q.key, this.#policies.liveSince(q.key.appName), q));
    if (rows.length === 0) return undefined;
    const events: StoredEvent[] = [];
    for (let i = 1; i < rows.length; i++) events.push(storedEvent((rows[i] as EventPageRow).body as Uint8Array));
    return events;
  }

  async getUserState(appName: string, userId: string): Promise<JsonObject> {
    return readUserState(this.db, appName, userId);
  }
}

/** The events a replay to `asOfSeq` folds, in seq order: a range of the primary key. */
export function replayQuery(db: Kysely<Database>, sessionPk: bigint, asOfSeq: bigint) {
  return db.selectFrom("events").select("body").where("session_pk", "=", sessionPk).where("seq", "<=", asOfSeq).orderBy("seq", "asc");
}

/** The events of `window` among `events` (ascending), as sessionWindowQuery selects them. */
function inWindow(events: StoredEvent[], window: EventWindow): StoredEvent[] {
  const { afterNs, numRecent } = window;
  const after = afterNs === undefined ? events : events.filter((e) => e.event.timestamp && timestampToNs(e.event.timestamp) >= afterNs);
  return numRecent === undefined ? after : numRecent === 0 ? [] : after.slice(-numRecent);
}

// Creating a session writes its initial user and app states. `||` replaces
// whole top-level values and keeps JSON null: ADK's delta rules (appends
// apply them in sessionstore_append). ON CONFLICT makes the first write of a
// scope race-free (ADK #4954). Each returns the new state and its size.
async function writeUserState(
  trx: Transaction<Database>,
  appName: string,
  userId: string,
  delta: JsonObject,
  now: bigint,
): Promise<{ state: JsonObject; bytes: number } | undefined> {
  if (isEmpty(delta)) return undefined;
  const row = await trx
    .insertInto("user_states")
    .values({ app_name: appName, user_id: userId, state: JSON.stringify(delta), update_time_ns: now })
    .onConflict((oc) =>
      oc.columns(["app_name", "user_id"]).doUpdateSet({
        state: sql<string>`user_states.state || excluded.state`,
        update_time_ns: sql<bigint>`excluded.update_time_ns`,
      }),
    )
    .returning(["state", sql<number>`octet_length(state::text)`.as("bytes")])
    .executeTakeFirstOrThrow();
  return { state: row.state as JsonObject, bytes: Number(row.bytes) };
}

async function writeAppState(
  trx: Transaction<Database>,
  appName: string,
  delta: JsonObject,
  now: bigint,
): Promise<{ state: JsonObject; bytes: number } | undefined> {
  if (isEmpty(delta)) return undefined;
  const row = await trx
    .insertInto("app_states")
    .values({ app_name: appName, state: JSON.stringify(delta), update_time_ns: now })
    .onConflict((oc) =>
      oc.column("app_name").doUpdateSet({
        state: sql<string>`app_states.state || excluded.state`,
        update_time_ns: sql<bigint>`excluded.update_time_ns`,
      }),
    )
    .returning(["state", sql<number>`octet_length(state::text)`.as("bytes")])
    .executeTakeFirstOrThrow();
  return { state: row.state as JsonObject, bytes: Number(row.bytes) };
}

/**
 * An append whose batch lost the database. Before a connection was had
 * nothing was written; after, the commit may have happened with its answer
 * lost. Either way the same event id makes a retry safe: a stored event is
 * answered as a duplicate, not stored twice.
 */
function lostAppend(pending: PendingAppend, err: unknown): Unavailable {
  return isConnectRefused(err)
    ? new Unavailable("the database is unavailable; nothing was written; retry", false, { cause: err })
    : new Unavailable(
        `the database connection was lost while the append was being committed, so it may or may not be stored; retry with the same event id ("${pending.eventId}"): a stored event is answered as a duplicate`,
        true,
        { cause: err },
      );
}

function settleNow<R>(f: () => R): Outcome<R> {
  try {
    return { ok: true, value: f() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** A row of sessionstore_append (migration 0004). */
interface AppendRow {
  o_outcome: "ok" | "duplicate" | "not_found" | "stale" | "too_many_events" | "event_too_big";
  o_seq: bigint | null;
  o_timestamp_ns: bigint | null;
  o_revision: bigint | null;
  o_update_time_ns: bigint | null;
  o_existing: Uint8Array | null;
  o_event_bytes: number | null;
  o_state_bytes: number | null;
  o_user_bytes: number | null;
  o_app_bytes: number | null;
}

// One text for every call (each argument is an array, whatever the batch
// size): prepared once per connection.
const APPEND_PREPARED = preparedComment("sessionstore_append");

const SCOPE_SIZE = {
  session: "the session state's size in bytes",
  user: "the user state's size in bytes",
  app: "the app state's size in bytes",
} as const;

/**
 * sessionstore_append's "state over its size limit" error (SQLSTATE SS001),
 * detail "<append index, from 1> <scope> <bytes>"; `index` counts from 0.
 */
function stateOverLimit(err: unknown): { index: number; scope: keyof typeof SCOPE_SIZE; bytes: number } | undefined {
  if (sqlState(err) !== "SS001") return undefined;
  const [n, scope, bytes] = String((err as { detail?: unknown }).detail).split(" ");
  if (scope !== "session" && scope !== "user" && scope !== "app") return undefined;
  return { index: Number(n) - 1, scope, bytes: Number(bytes) };
}

async function readUserState(db: Kysely<Database>, appName: string, userId: string): Promise<JsonObject> {
  const row = await db
    .selectFrom("user_states")
    .select("state")
    .where("app_name", "=", appName)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return (row?.state as JsonObject | undefined) ?? {};
}

async function readAppState(db: Kysely<Database>, appName: string): Promise<JsonObject> {
  const row = await db.selectFrom("app_states").select("state").where("app_name", "=", appName).executeTakeFirst();
  return (row?.state as JsonObject | undefined) ?? {};
}

function storedEvent(body: Uint8Array): StoredEvent {
  return { event: decodeEvent(body), body };
}

function decodeEvent(body: Uint8Array): Event {
  return fromBinary(EventSchema, body);
}

export function toStoredSession(row: SessionRow): StoredSession {
  return {
    ...(row.forked_from_id != null ? { forkedFrom: { sessionId: row.forked_from_id, seq: row.forked_at_seq ?? 0n } } : {}),
    appName: row.app_name,
    userId: row.user_id,
    id: row.id,
    sessionState: row.state as JsonObject,
    appState: (row.app_state as JsonObject | null) ?? {},
    userState: (row.user_state as JsonObject | null) ?? {},
    revision: row.revision,
    createTimeNs: row.create_time_ns,
    updateTimeNs: row.update_time_ns,
  };
}
