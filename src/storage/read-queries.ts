import { CompiledQuery, type Kysely } from "kysely";
import { preparedComment } from "./database.js";
import type { Database } from "./schema.js";

// The reads an agent makes on every turn (GetSession with a window,
// ListEvents, the first page of ListSessions), each as ONE statement: one
// database round trip instead of two or three. The text of each variant is
// built once and kept, so a call neither builds nor compiles a query tree;
// only the parameters change, and on PostgreSQL it is a prepared statement
// (preparedComment in database.ts).

/** Which events a GetSession returns (see EventWindow in session-store.ts). */
export interface WindowShape {
  /** Undefined: all events. */
  numRecent?: number | undefined;
  /** Inclusive lower bound on the event timestamp. */
  afterNs?: bigint | undefined;
}

export interface SessionKeyParams {
  appName: string;
  userId: string;
  sessionId: string;
}

/** A session row with its app and user state, as every session read returns it. */
export interface SessionRow {
  app_name: string;
  user_id: string;
  id: string;
  state: unknown;
  revision: bigint;
  create_time_ns: bigint;
  update_time_ns: bigint;
  app_state: unknown;
  user_state: unknown;
  /** Only where the read selects them (a session's own reads, not listings). */
  forked_from_id?: string | null;
  forked_at_seq?: bigint | null;
}

/**
 * A row of sessionWindowQuery: the first (`k` = 0) is the session with its
 * app and user state, each further one (`k` = 1) an event of the window, in
 * seq order, with only `body` set.
 */
export interface SessionWindowRow extends SessionRow {
  k: number;
  forked_from_id: string | null;
  forked_at_seq: bigint | null;
  body: Uint8Array | null;
}

const texts = new Map<string, string>();

function cached(id: string, build: () => string): string {
  let text = texts.get(id);
  if (text === undefined) {
    // Also a named statement on PostgreSQL: planned once per connection.
    text = `${preparedComment(`sessionstore_read_${texts.size + 1}`)}\n${build()}`;
    texts.set(id, text);
  }
  return text;
}

/**
 * GetSession: the session row, its app and user state and the events of its
 * window in one statement: the session (once, so its JSON is parsed once),
 * then the events as rows of their own (a bytea array would be parsed
 * character by character in JavaScript). The events are bounded by the
 * revision of the same row, in the same snapshot, so they match the state
 * returned; the N most recent walk the primary key backwards from the
 * revision, a time bound starts at its place in events_by_time: the cost
 * follows the window, not the history.
 */
export function sessionWindowQuery(key: SessionKeyParams, cutoff: bigint | undefined, window: WindowShape): CompiledQuery {
  const params: unknown[] = [key.appName, key.userId, key.sessionId];
  const at = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const cutoffAt = cutoff === undefined ? undefined : at(cutoff);
  const afterAt = window.afterNs === undefined ? undefined : at(window.afterNs);
  const limitAt = window.numRecent === undefined || window.numRecent === 0 ? undefined : at(window.numRecent);
  const variant = `get:${cutoffAt ?? ""}:${afterAt ?? ""}:${limitAt ?? ""}:${window.numRecent === 0 ? "none" : ""}`;
  const text = cached(variant, () => {
    const session = `WITH s AS (
         SELECT s.pk, s.app_name, s.user_id, s.id, s.state, s.revision, s.create_time_ns, s.update_time_ns,
           s.forked_from_id, s.forked_at_seq,
           (SELECT a.state FROM app_states a WHERE a.app_name = s.app_name) AS app_state,
           (SELECT u.state FROM user_states u WHERE u.app_name = s.app_name AND u.user_id = s.user_id) AS user_state
         FROM sessions s
         WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3${cutoffAt === undefined ? "" : ` AND s.update_time_ns >= ${cutoffAt}`}
       )
       SELECT 0 AS k, app_name, user_id, id, state, revision, create_time_ns, update_time_ns, forked_from_id, forked_at_seq,
         app_state, user_state, NULL::bigint AS seq, NULL::bytea AS body
       FROM s`;
    if (window.numRecent === 0) return session;
    const after = afterAt === undefined ? "" : ` AND e.timestamp_ns >= ${afterAt}`;
    const order = limitAt === undefined ? "ORDER BY e.seq ASC" : `ORDER BY e.seq DESC LIMIT ${limitAt}`;
    return `${session}
       UNION ALL
       SELECT 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, e.seq, e.body
       FROM s, LATERAL (SELECT e.seq, e.body FROM events e WHERE e.session_pk = s.pk AND e.seq <= s.revision${after} ${order}) e
       ORDER BY k, seq`;
  });
  return CompiledQuery.raw(text, params);
}

/** A row of eventPageQuery: a first one (`k` = 0) when the session exists, then the page's events in order. */
export interface EventPageRow {
  k: number;
  body: Uint8Array | null;
}

/** ListEvents: the session's existence and a page of its events, one statement. */
export function eventPageQuery(
  key: SessionKeyParams,
  cutoff: bigint | undefined,
  page: { limit: number; descending: boolean; cursorSeq?: bigint | undefined },
): CompiledQuery {
  const params: unknown[] = [key.appName, key.userId, key.sessionId, page.limit];
  const at = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const cutoffAt = cutoff === undefined ? undefined : at(cutoff);
  const cursorAt = page.cursorSeq === undefined ? undefined : at(page.cursorSeq);
  const dir = page.descending ? "DESC" : "ASC";
  const variant = `events:${cutoffAt ?? ""}:${cursorAt ?? ""}:${dir}`;
  const text = cached(variant, () => {
    const cursor = cursorAt === undefined ? "" : ` AND e.seq ${page.descending ? "<" : ">"} ${cursorAt}`;
    return `WITH s AS (
         SELECT s.pk FROM sessions s
         WHERE s.app_name = $1 AND s.user_id = $2 AND s.id = $3${cutoffAt === undefined ? "" : ` AND s.update_time_ns >= ${cutoffAt}`}
       )
       SELECT 0 AS k, NULL::bigint AS seq, NULL::bytea AS body FROM s
       UNION ALL
       SELECT 1, e.seq, e.body
       FROM s, LATERAL (SELECT e.seq, e.body FROM events e WHERE e.session_pk = s.pk${cursor} ORDER BY e.seq ${dir} LIMIT $4) e
       ORDER BY k, seq ${dir}`;
  });
  return CompiledQuery.raw(text, params);
}

/** A row of sessionPageQuery. */
export type SessionListRow = SessionRow;

/**
 * A page of ListSessions by keyset on (app_name, [user_id,] update_time_ns,
 * id[, user_id]), with each session's user state joined and the app's state
 * as an uncorrelated subquery (evaluated once): one statement.
 */
export function sessionPageQuery(q: {
  appName: string;
  userId?: string | undefined;
  limit: number;
  after?: { updateTimeNs: bigint; id: string; userId: string } | undefined;
  newestFirst?: boolean | undefined;
  cutoff: bigint | undefined;
}): CompiledQuery {
  const params: unknown[] = [q.appName, q.limit];
  const at = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const cutoffAt = q.cutoff === undefined ? undefined : at(q.cutoff);
  const userAt = q.userId === undefined ? undefined : at(q.userId);
  const dir = q.newestFirst ? "DESC" : "ASC";
  const past = q.newestFirst ? "<" : ">";
  let afterAt: string | undefined;
  if (q.after) {
    afterAt =
      userAt === undefined
        ? `(${at(q.after.updateTimeNs)}, ${at(q.after.id)}, ${at(q.after.userId)})`
        : `(${at(q.after.updateTimeNs)}, ${at(q.after.id)})`;
  }
  const variant = `sessions:${cutoffAt ?? ""}:${userAt ?? ""}:${afterAt ?? ""}:${dir}`;
  const text = cached(variant, () => {
    const where = [`s.app_name = $1`];
    // Expired sessions are the oldest: the bound starts the index scan past them.
    if (cutoffAt !== undefined) where.push(`s.update_time_ns >= ${cutoffAt}`);
    if (userAt !== undefined) where.push(`s.user_id = ${userAt}`);
    if (afterAt !== undefined) {
      where.push(
        userAt === undefined ? `(s.update_time_ns, s.id, s.user_id) ${past} ${afterAt}` : `(s.update_time_ns, s.id) ${past} ${afterAt}`,
      );
    }
    // Newest first walks the same index backwards.
    const order = userAt === undefined ? `s.update_time_ns ${dir}, s.id ${dir}, s.user_id ${dir}` : `s.update_time_ns ${dir}, s.id ${dir}`;
    return `SELECT s.app_name, s.user_id, s.id, s.state, s.revision, s.create_time_ns, s.update_time_ns, u.state AS user_state,
         (SELECT a.state FROM app_states a WHERE a.app_name = $1) AS app_state
       FROM sessions s
       LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
       WHERE ${where.join(" AND ")}
       ORDER BY ${order}
       LIMIT $2`;
  });
  return CompiledQuery.raw(text, params);
}

/** Runs one of the statements above. */
export async function runRead<R>(db: Kysely<Database>, query: CompiledQuery): Promise<R[]> {
  return (await db.executeQuery<R>(query)).rows;
}
