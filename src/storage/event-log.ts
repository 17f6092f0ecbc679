import { type Kysely, sql } from "kysely";
import { type LogPosition, ORIGIN } from "./log-position.js";
import type { Database } from "./schema.js";

/** A stored event as tails read it. */
export interface LoggedEvent {
  sessionPk: bigint;
  appName: string;
  userId: string;
  sessionId: string;
  seq: bigint;
  position: LogPosition;
  body: Uint8Array;
}

/** Which sessions a wide read covers. No appName: every app (the process-wide feed). */
export interface ScopeFilter {
  appName?: string | undefined;
  userId?: string | undefined;
  /** Skip sessions last updated before this (expired by the app's retention). */
  liveSince?: bigint | undefined;
}

export interface ScopeRead {
  events: LoggedEvent[];
  /** Every event of the scope up to here has been returned (when fewer than `limit` came back). */
  reached: LogPosition;
  /** Some committed rows sit above the watermark, waiting for an older transaction to end. */
  pending: boolean;
}

export interface Row {
  session_pk: bigint | null;
  seq: bigint | null;
  pos: bigint | null;
  tx: string | null;
  body: Uint8Array | null;
  app_name: string | null;
  user_id: string | null;
  session_id: string | null;
  xmin: string;
  pending: boolean;
}

/** The reads behind StreamEvents. Same SQL on PostgreSQL and PGlite. */
export class EventLog {
  constructor(private readonly db: Kysely<Database>) {}

  /** Events of one session with seq > afterSeq, in seq order. */
  async readSession(sessionPk: bigint, afterSeq: bigint, limit: number): Promise<LoggedEvent[]> {
    const rows = await this.db
      .selectFrom("events as e")
      .innerJoin("sessions as s", "s.pk", "e.session_pk")
      .select(["e.session_pk", "e.seq", "e.pos", "e.tx", "e.body", "s.app_name", "s.user_id", "s.id as session_id"])
      .where("e.session_pk", "=", sessionPk)
      .where("e.seq", ">", afterSeq)
      .orderBy("e.seq")
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      sessionPk: r.session_pk,
      appName: r.app_name,
      userId: r.user_id,
      sessionId: r.session_id,
      seq: r.seq,
      position: { tx: BigInt(r.tx), pos: r.pos },
      body: r.body,
    }));
  }

  /**
   * Events of a scope after `after`, in (tx, pos) order, only below the
   * watermark taken from this statement's own snapshot, so that what comes
   * back is final: nothing can later appear before the last row returned.
   */
  async readScope(filter: ScopeFilter, after: LogPosition, limit: number): Promise<ScopeRead> {
    const { rows } = await scopeQuery(filter, after, limit).execute(this.db);
    const first = rows[0];
    if (!first) throw new Error("watermark query returned no row");
    const events: LoggedEvent[] = [];
    for (const r of rows) {
      if (r.session_pk === null) continue;
      events.push({
        sessionPk: r.session_pk,
        appName: r.app_name as string,
        userId: r.user_id as string,
        sessionId: r.session_id as string,
        seq: r.seq as bigint,
        position: { tx: BigInt(r.tx as string), pos: r.pos as bigint },
        body: r.body as Uint8Array,
      });
    }
    // Where the read got to is the last row it returned, never the
    // watermark itself: see lastBelowWatermark.
    const reached = events[events.length - 1]?.position ?? after;
    return { events, reached, pending: first.pending };
  }

  /** A session's highest seq (its revision), where a live-only session tail starts. */
  async lastSeq(sessionPk: bigint): Promise<bigint> {
    const row = await this.db.selectFrom("sessions").select("revision").where("pk", "=", sessionPk).executeTakeFirst();
    return row?.revision ?? 0n;
  }

  /**
   * Where a live-only wide tail starts: just after the scope's newest event
   * committed before this statement. Not the watermark (`now`): rows of
   * transactions that committed while an older one still runs lie above it,
   * and a tail starting there would deliver them although they were stored
   * before the call. Everything after this position in (tx, pos) order was
   * uncommitted when the statement ran, so cursors keep their meaning. The
   * price: an append still running then with a tx below this head is left
   * out, since one position cannot skip rows before it and keep others.
   */
  async head(filter: { appName: string; userId?: string | undefined }): Promise<LogPosition> {
    const row = await headQuery(this.db, filter).executeTakeFirst();
    return row ? { tx: BigInt(row.tx_text), pos: row.pos } : ORIGIN;
  }

  /**
   * Where the shared feed starts reading when its first tail arrives: the
   * newest row below the watermark now.
   *
   * A position is always a stored row's, never one derived from the
   * watermark (xmin - 1): transaction ids that left nothing durable (a
   * NOTIFY's own transaction commits without flushing) can be handed out
   * again after a crash of the database, so a position past them would skip
   * the rows of the new transactions that reuse them. A stored row's tx was
   * flushed with its commit, and no later transaction reuses it.
   */
  async now(): Promise<LogPosition> {
    const { rows } = await sql<{ tx: string; pos: bigint }>`
      SELECT tx::text AS tx, pos FROM events
      WHERE tx < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY tx DESC, pos DESC
      LIMIT 1`.execute(this.db);
    const row = rows[0];
    return row ? { tx: BigInt(row.tx), pos: row.pos } : ORIGIN;
  }
}

/** The statement behind head, exposed so a test can check it probes one index entry. */
export function headQuery(db: Kysely<Database>, filter: { appName: string; userId?: string | undefined }) {
  return (
    db
      .selectFrom("events")
      // Not aliased "tx": ORDER BY would then sort the text.
      .select([sql<string>`tx::text`.as("tx_text"), "pos"])
      .where("app_name", "=", filter.appName)
      .$if(filter.userId !== undefined, (qb) => qb.where("user_id", "=", filter.userId as string))
      .orderBy("tx", "desc")
      .orderBy("pos", "desc")
      .limit(1)
  );
}

/**
 * The statement behind readScope, exposed so a test can check its plan: it
 * must read about `limit` rows whatever the size of the table.
 */
export function scopeQuery(filter: ScopeFilter, after: LogPosition, limit: number) {
  const scope = [
    filter.appName === undefined ? sql`` : sql`AND e.app_name = ${filter.appName}`,
    filter.userId === undefined ? sql`` : sql`AND e.user_id = ${filter.userId}`,
    filter.liveSince === undefined ? sql`` : sql`AND s.update_time_ns >= ${filter.liveSince}`,
  ];
  return sql<Row>`
      -- Computed once: the newest tx comes from the end of events_feed (a
      -- correlated EXISTS here was run per returned row, as a full scan).
      WITH w AS (
        SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin, (SELECT max(p.tx) FROM events p) AS newest
      ),
      r AS (
        SELECT e.session_pk, e.seq, e.pos, e.tx, e.body, s.app_name, s.user_id, s.id AS session_id
        FROM events e JOIN sessions s ON s.pk = e.session_pk, w
        WHERE (e.tx, e.pos) > (${after.tx.toString()}::xid8, ${after.pos})
          AND e.tx < w.xmin ${scope[0]} ${scope[1]} ${scope[2]}
        ORDER BY e.tx, e.pos
        LIMIT ${limit}
      )
      SELECT r.session_pk, r.seq, r.pos, r.tx::text AS tx, r.body, r.app_name, r.user_id, r.session_id,
             w.xmin::text AS xmin,
             coalesce(w.newest >= w.xmin, false) AS pending
      FROM w LEFT JOIN r ON true
      ORDER BY r.tx, r.pos`;
}
