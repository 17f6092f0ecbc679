import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import { Invalid, Unsupported } from "../domain/outcomes.js";
import { nowNs } from "../domain/time.js";
import { PolicySet } from "../policy/app-policy.js";
import type { Database } from "./schema.js";
import { type SweepScope, sweepScopeFilter } from "./sweep-scope.js";

// LangGraph checkpoints (see migrations/0007_checkpoints.ts). Every query is
// scoped by the thread row's (app_name, user_id): a thread of another user
// or app is never read, copied or deleted. Writes to a thread take that
// thread's row lock first, so writers of different threads never wait on
// each other, and a prune or run deletion cannot free a value that a
// concurrent put is about to reference.

export interface ThreadKey {
  appName: string;
  userId: string;
  threadId: string;
}

/** What the client's serializer produced: a type tag and bytes, never decoded here. */
export interface TypedBytes {
  type: string;
  data: Uint8Array;
}

export interface StoredValue {
  channel: string;
  version: string;
  /** Undefined: the channel has this version but no value ("empty"). */
  value?: TypedBytes | undefined;
}

export interface StoredWrite {
  taskId: string;
  channel: string;
  value: TypedBytes;
  taskPath: string;
  idx: number;
}

export interface StoredCheckpoint {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string;
  body: TypedBytes;
  channelVersions: Record<string, string>;
  metadata: TypedBytes;
  metadataJson: string;
  values: StoredValue[];
  writes: StoredWrite[];
  createTimeNs: bigint;
}

export interface PutCheckpointInput {
  key: ThreadKey;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string;
  body: TypedBytes;
  channelVersions: Record<string, string>;
  metadata: TypedBytes;
  /** A JSON object, already checked. */
  metadataJson: string;
  newValues: StoredValue[];
}

export interface PutWritesInput {
  key: ThreadKey;
  checkpointNs: string;
  checkpointId: string;
  writes: StoredWrite[];
  replace: boolean;
}

export interface ListCheckpointsQuery {
  appName: string;
  userId: string;
  threadId?: string | undefined;
  checkpointNs?: string | undefined;
  checkpointId?: string | undefined;
  /** A JSON object, already checked. */
  filterJson?: string | undefined;
  beforeCheckpointId?: string | undefined;
  limit: number;
  /** Keyset position: the last checkpoint of the previous page. */
  after?: { checkpointId: string; threadId: string; checkpointNs: string } | undefined;
}

export type PruneStrategy = "keep_latest" | "delete";

/** Metadata keys that mark a thread whose channels LangGraph rebuilds from older checkpoints' writes. */
const DELTA_MARKERS = ["counters_since_delta_snapshot", "delta_writes_versioned"];

/** One row of #select: a checkpoint ("c", a = thread id, b = parent, c = metadata JSON), a value ("v", a = channel, b = version) or a write ("w", a = task id, b = channel, c = task path). */
interface PartRow {
  kind: "c" | "v" | "w";
  thread_pk: bigint;
  checkpoint_ns: string;
  checkpoint_id: string;
  a: string;
  b: string;
  c: string | null;
  idx: number | null;
  type: string | null;
  data: Uint8Array | null;
  channel_versions: Record<string, string> | null;
  metadata_type: string | null;
  metadata: Uint8Array | null;
  create_time_ns: bigint | null;
}

export class CheckpointStore {
  readonly #db: Kysely<Database>;
  readonly #policies: PolicySet;

  constructor(db: Kysely<Database>, policies: PolicySet = new PolicySet()) {
    this.#db = db;
    this.#policies = policies;
  }

  /** Threads last written before this instant are expired, as sessions are: gone for every read at once. */
  #liveSince(appName: string): bigint | undefined {
    const ttl = this.#policies.for(appName).ttlSeconds;
    return ttl === undefined ? undefined : nowNs() - BigInt(ttl) * 1_000_000_000n;
  }

  #live(appName: string, alias: string): RawBuilder<unknown> {
    const cutoff = this.#liveSince(appName);
    return cutoff === undefined ? sql`true` : sql`${sql.ref(`${alias}.update_time_ns`)} >= ${cutoff}`;
  }

  /**
   * What retention took does not come back with the next write: an expired
   * thread is deleted before a write upserts it. On its own (not in the
   * write's statement), as the sweeper would do it anyway.
   */
  async #dropIfExpired(db: Kysely<Database> | Transaction<Database>, key: ThreadKey): Promise<void> {
    const cutoff = this.#liveSince(key.appName);
    if (cutoff === undefined) return;
    await sql`
      DELETE FROM checkpoint_threads
      WHERE app_name = ${key.appName} AND user_id = ${key.userId} AND thread_id = ${key.threadId} AND update_time_ns < ${cutoff}`.execute(
      db,
    );
  }

  /**
   * The thread's row, created when missing and its write time moved on: as a
   * CTE, so a write is one statement, and the row stays locked until the
   * statement's transaction ends.
   */
  #upsertThread(key: ThreadKey, now: bigint): RawBuilder<unknown> {
    return sql`
      INSERT INTO checkpoint_threads (app_name, user_id, thread_id, create_time_ns, update_time_ns)
      VALUES (${key.appName}, ${key.userId}, ${key.threadId}, ${now}, ${now})
      ON CONFLICT ON CONSTRAINT checkpoint_threads_key
      DO UPDATE SET update_time_ns = GREATEST(checkpoint_threads.update_time_ns, EXCLUDED.update_time_ns)
      RETURNING pk`;
  }

  async #lockThread(trx: Transaction<Database>, key: ThreadKey, now: bigint): Promise<bigint> {
    await this.#dropIfExpired(trx, key);
    const { rows } = await sql<{ pk: bigint }>`${this.#upsertThread(key, now)}`.execute(trx);
    const pk = rows[0]?.pk;
    if (pk === undefined) throw new Error("thread upsert returned no row");
    return pk;
  }

  /** One statement: the thread, the new values (a version's value never changes), the checkpoint. */
  async putCheckpoint(input: PutCheckpointInput): Promise<void> {
    await this.#dropIfExpired(this.#db, input.key);
    const now = nowNs();
    const values =
      input.newValues.length === 0
        ? sql``
        : sql`, v AS (
            INSERT INTO checkpoint_values (thread_pk, checkpoint_ns, channel, version, value_type, value)
            SELECT t.pk, ${input.checkpointNs}, x.channel, x.version, x.value_type, x.value
            FROM t, (VALUES ${sql.join(
              input.newValues.map(
                (v) => sql`(${v.channel}::text, ${v.version}::text, ${v.value?.type ?? null}::text, ${v.value?.data ?? null}::bytea)`,
              ),
            )}) AS x (channel, version, value_type, value)
            ON CONFLICT DO NOTHING
          )`;
    await sql`
      WITH t AS (${this.#upsertThread(input.key, now)}) ${values}
      INSERT INTO checkpoints (thread_pk, checkpoint_ns, checkpoint_id, parent_checkpoint_id, body_type, body,
        channel_versions, metadata_type, metadata, metadata_json, run_id, create_time_ns)
      SELECT t.pk, ${input.checkpointNs}, ${input.checkpointId}, ${input.parentCheckpointId}, ${input.body.type}, ${input.body.data},
        ${JSON.stringify(input.channelVersions)}::jsonb, ${input.metadata.type}, ${input.metadata.data}, ${input.metadataJson}::jsonb,
        ${input.metadataJson}::jsonb ->> 'run_id', ${now}
      FROM t
      ON CONFLICT (thread_pk, checkpoint_ns, checkpoint_id) DO UPDATE SET
        body_type = EXCLUDED.body_type, body = EXCLUDED.body, channel_versions = EXCLUDED.channel_versions,
        metadata_type = EXCLUDED.metadata_type, metadata = EXCLUDED.metadata, metadata_json = EXCLUDED.metadata_json,
        run_id = EXCLUDED.run_id`.execute(this.#db);
  }

  async putWrites(input: PutWritesInput): Promise<void> {
    if (input.writes.length === 0) return;
    await this.#dropIfExpired(this.#db, input.key);
    const rows = input.writes.map(
      (w) =>
        sql`(${w.taskId}::text, ${w.idx}::integer, ${w.taskPath}::text, ${w.channel}::text, ${w.value.type}::text, ${w.value.data}::bytea)`,
    );
    const conflict = input.replace
      ? sql`DO UPDATE SET channel = EXCLUDED.channel, value_type = EXCLUDED.value_type, value = EXCLUDED.value, task_path = EXCLUDED.task_path`
      : sql`DO NOTHING`;
    await sql`
      WITH t AS (${this.#upsertThread(input.key, nowNs())})
      INSERT INTO checkpoint_writes (thread_pk, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, value_type, value)
      SELECT t.pk, ${input.checkpointNs}, ${input.checkpointId}, x.task_id, x.idx, x.task_path, x.channel, x.value_type, x.value
      FROM t, (VALUES ${sql.join(rows)}) AS x (task_id, idx, task_path, channel, value_type, value)
      ON CONFLICT (thread_pk, checkpoint_ns, checkpoint_id, task_id, idx) ${conflict}`.execute(this.#db);
  }

  /** One checkpoint, or the latest of its namespace; undefined when there is none. */
  async getCheckpoint(key: ThreadKey, checkpointNs: string, checkpointId?: string): Promise<StoredCheckpoint | undefined> {
    const found = await this.#select(
      sql`t.app_name = ${key.appName} AND t.user_id = ${key.userId} AND t.thread_id = ${key.threadId} AND ${this.#live(key.appName, "t")}
        AND c.checkpoint_ns = ${checkpointNs} ${checkpointId ? sql`AND c.checkpoint_id = ${checkpointId}` : sql``}`,
      1,
    );
    return found[0];
  }

  async listCheckpoints(q: ListCheckpointsQuery): Promise<StoredCheckpoint[]> {
    const where: RawBuilder<unknown>[] = [sql`t.app_name = ${q.appName}`, sql`t.user_id = ${q.userId}`, this.#live(q.appName, "t")];
    if (q.threadId !== undefined) where.push(sql`t.thread_id = ${q.threadId}`);
    if (q.checkpointNs !== undefined) where.push(sql`c.checkpoint_ns = ${q.checkpointNs}`);
    if (q.checkpointId !== undefined) where.push(sql`c.checkpoint_id = ${q.checkpointId}`);
    if (q.filterJson !== undefined) where.push(sql`c.metadata_json @> ${q.filterJson}::jsonb`);
    if (q.beforeCheckpointId !== undefined) where.push(sql`c.checkpoint_id < ${q.beforeCheckpointId}`);
    if (q.after) {
      where.push(
        sql`(c.checkpoint_id, t.thread_id, c.checkpoint_ns) < (${q.after.checkpointId}, ${q.after.threadId}, ${q.after.checkpointNs})`,
      );
    }
    return this.#select(sql.join(where, sql` AND `), q.limit);
  }

  /**
   * The matching checkpoints, newest first, each with the values its
   * channel_versions name and its pending writes: one statement, whose rows
   * are the checkpoints ("c"), their values ("v") and their writes ("w").
   */
  async #select(where: RawBuilder<unknown>, limit: number): Promise<StoredCheckpoint[]> {
    const { rows } = await sql<PartRow>`
      WITH cp AS (
        SELECT c.*, t.thread_id FROM checkpoints c JOIN checkpoint_threads t ON t.pk = c.thread_pk
        WHERE ${where}
        ORDER BY c.checkpoint_id DESC, t.thread_id DESC, c.checkpoint_ns DESC
        LIMIT ${limit}
      )
      SELECT 'c' AS kind, cp.thread_pk, cp.checkpoint_ns, cp.checkpoint_id, cp.thread_id AS a, cp.parent_checkpoint_id AS b,
        cp.metadata_json::text AS c, NULL::integer AS idx, cp.body_type AS type, cp.body AS data,
        cp.channel_versions, cp.metadata_type, cp.metadata, cp.create_time_ns
      FROM cp
      UNION ALL
      SELECT 'v', cp.thread_pk, cp.checkpoint_ns, cp.checkpoint_id, v.channel, v.version, NULL, NULL, v.value_type, v.value,
        NULL, NULL, NULL, NULL
      FROM cp
      CROSS JOIN LATERAL jsonb_each_text(cp.channel_versions) AS cv
      JOIN checkpoint_values v ON v.thread_pk = cp.thread_pk AND v.checkpoint_ns = cp.checkpoint_ns
        AND v.channel = cv.key AND v.version = cv.value
      UNION ALL
      SELECT 'w', cp.thread_pk, cp.checkpoint_ns, cp.checkpoint_id, cw.task_id, cw.channel, cw.task_path, cw.idx, cw.value_type, cw.value,
        NULL, NULL, NULL, NULL
      FROM cp
      JOIN checkpoint_writes cw ON cw.thread_pk = cp.thread_pk AND cw.checkpoint_ns = cp.checkpoint_ns AND cw.checkpoint_id = cp.checkpoint_id`.execute(
      this.#db,
    );
    const byKey = new Map<string, StoredCheckpoint>();
    for (const r of rows) {
      if (r.kind !== "c") continue;
      byKey.set(partKey(r.thread_pk, r.checkpoint_ns, r.checkpoint_id), {
        threadId: r.a,
        checkpointNs: r.checkpoint_ns,
        checkpointId: r.checkpoint_id,
        parentCheckpointId: r.b,
        body: { type: r.type ?? "", data: r.data ?? new Uint8Array() },
        channelVersions: r.channel_versions ?? {},
        metadata: { type: r.metadata_type ?? "", data: r.metadata ?? new Uint8Array() },
        metadataJson: r.c ?? "{}",
        values: [],
        writes: [],
        createTimeNs: r.create_time_ns ?? 0n,
      });
    }
    for (const p of rows) {
      const cp = byKey.get(partKey(p.thread_pk, p.checkpoint_ns, p.checkpoint_id));
      if (!cp || p.kind === "c") continue;
      if (p.kind === "v") {
        cp.values.push({
          channel: p.a,
          version: p.b,
          value: p.type === null || p.data === null ? undefined : { type: p.type, data: p.data },
        });
      } else {
        cp.writes.push({
          taskId: p.a,
          channel: p.b,
          taskPath: p.c ?? "",
          idx: p.idx ?? 0,
          value: { type: p.type ?? "", data: p.data ?? new Uint8Array() },
        });
      }
    }
    const out = [...byKey.values()];
    // Newest first as the query ordered them (ids are COLLATE "C": byte
    // order, which is code point order); writes in LangGraph's
    // writes_sort_key order, as Python compares strings.
    out.sort(
      (x, y) =>
        compareCodePoints(y.checkpointId, x.checkpointId) ||
        compareCodePoints(y.threadId, x.threadId) ||
        compareCodePoints(y.checkpointNs, x.checkpointNs),
    );
    for (const cp of out) {
      cp.writes.sort((x, y) => compareCodePoints(x.taskPath, y.taskPath) || compareCodePoints(x.taskId, y.taskId) || x.idx - y.idx);
    }
    return out;
  }

  /** Deletes a thread whole; false when there was none. */
  async deleteThread(key: ThreadKey): Promise<boolean> {
    const result = await sql`
      DELETE FROM checkpoint_threads
      WHERE app_name = ${key.appName} AND user_id = ${key.userId} AND thread_id = ${key.threadId}`.execute(this.#db);
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** Copies a thread into another of the same user; checkpoints the target already has stay as they are. */
  async copyThread(source: ThreadKey, targetThreadId: string): Promise<number> {
    if (source.threadId === targetThreadId) throw new Invalid("source_thread_id and target_thread_id must differ");
    const now = nowNs();
    return this.#db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pk: bigint }>`
        SELECT pk FROM checkpoint_threads t
        WHERE app_name = ${source.appName} AND user_id = ${source.userId} AND thread_id = ${source.threadId} AND ${this.#live(source.appName, "t")}
        FOR SHARE`.execute(trx);
      const from = rows[0]?.pk;
      if (from === undefined) return 0;
      const to = await this.#lockThread(trx, { ...source, threadId: targetThreadId }, now);
      await sql`
        INSERT INTO checkpoint_values (thread_pk, checkpoint_ns, channel, version, value_type, value)
        SELECT ${to}, checkpoint_ns, channel, version, value_type, value FROM checkpoint_values WHERE thread_pk = ${from}
        ON CONFLICT DO NOTHING`.execute(trx);
      await sql`
        INSERT INTO checkpoint_writes (thread_pk, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, value_type, value)
        SELECT ${to}, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, value_type, value FROM checkpoint_writes WHERE thread_pk = ${from}
        ON CONFLICT DO NOTHING`.execute(trx);
      const copied = await sql`
        INSERT INTO checkpoints (thread_pk, checkpoint_ns, checkpoint_id, parent_checkpoint_id, body_type, body,
          channel_versions, metadata_type, metadata, metadata_json, run_id, create_time_ns)
        SELECT ${to}, checkpoint_ns, checkpoint_id, parent_checkpoint_id, body_type, body,
          channel_versions, metadata_type, metadata, metadata_json, run_id, create_time_ns
        FROM checkpoints WHERE thread_pk = ${from}
        ON CONFLICT DO NOTHING`.execute(trx);
      return Number(copied.numAffectedRows ?? 0n);
    });
  }

  /** Deletes the checkpoints of the given runs in every thread of one user, with their writes and the values only they used. */
  async deleteRuns(appName: string, userId: string, runIds: string[]): Promise<number> {
    if (runIds.length === 0) return 0;
    const runs = sql.join(runIds);
    return this.#db.transaction().execute(async (trx) => {
      const threads = await this.#lockThreads(
        trx,
        sql`app_name = ${appName} AND user_id = ${userId}
          AND pk IN (SELECT thread_pk FROM checkpoints WHERE run_id IN (${runs}))`,
      );
      if (threads.length === 0) return 0;
      const deleted = await this.#deleteCheckpoints(trx, threads, sql`c.run_id IN (${runs})`);
      await this.#deleteUnusedValues(trx, threads);
      return deleted;
    });
  }

  /** Prunes threads of one user; see PruneStrategy. */
  async pruneThreads(appName: string, userId: string, threadIds: string[], strategy: PruneStrategy): Promise<number> {
    if (threadIds.length === 0) return 0;
    const ids = sql.join(threadIds);
    if (strategy === "delete") {
      const { rows } = await sql<{ n: bigint }>`
        WITH d AS (DELETE FROM checkpoint_threads WHERE app_name = ${appName} AND user_id = ${userId} AND thread_id IN (${ids}) RETURNING pk)
        SELECT count(*)::bigint AS n FROM checkpoints WHERE thread_pk IN (SELECT pk FROM d)`.execute(this.#db);
      return Number(rows[0]?.n ?? 0n);
    }
    return this.#db.transaction().execute(async (trx) => {
      const threads = await this.#lockThreads(trx, sql`app_name = ${appName} AND user_id = ${userId} AND thread_id IN (${ids})`);
      if (threads.length === 0) return 0;
      const pks = sql.join(threads);
      // Keeping only the latest checkpoint would cut a delta channel off the
      // older writes it is rebuilt from: refused, as LangGraph's Postgres saver does.
      const { rows: delta } = await sql<{ thread_id: string }>`
        SELECT DISTINCT t.thread_id FROM checkpoints c JOIN checkpoint_threads t ON t.pk = c.thread_pk
        WHERE c.thread_pk IN (${pks}) AND (${sql.join(
          DELTA_MARKERS.map((m) => sql`c.metadata_json ? ${m}`),
          sql` OR `,
        )})
        ORDER BY t.thread_id`.execute(trx);
      if (delta.length > 0) {
        throw new Unsupported(`keep_latest cannot prune threads that use a DeltaChannel: ${delta.map((r) => r.thread_id).join(", ")}`);
      }
      const deleted = await this.#deleteCheckpoints(
        trx,
        threads,
        sql`c.checkpoint_id < (SELECT max(l.checkpoint_id) FROM checkpoints l
              WHERE l.thread_pk = c.thread_pk AND l.checkpoint_ns = c.checkpoint_ns)`,
      );
      // The kept checkpoint's parent is gone: it is now the first of its namespace.
      await sql`
        UPDATE checkpoints c SET parent_checkpoint_id = ''
        WHERE c.thread_pk IN (${pks}) AND c.parent_checkpoint_id <> ''
          AND NOT EXISTS (SELECT 1 FROM checkpoints p
            WHERE p.thread_pk = c.thread_pk AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id)`.execute(
        trx,
      );
      await this.#deleteUnusedValues(trx, threads);
      return deleted;
    });
  }

  /** Locks the matching thread rows in key order (so that two of these never deadlock) and returns their keys. */
  async #lockThreads(trx: Transaction<Database>, where: RawBuilder<unknown>): Promise<bigint[]> {
    const { rows } = await sql<{ pk: bigint }>`
      SELECT pk FROM checkpoint_threads WHERE ${where} ORDER BY pk FOR UPDATE`.execute(trx);
    return rows.map((r) => r.pk);
  }

  /** Deletes the matching checkpoints of locked threads and the writes made against them. */
  async #deleteCheckpoints(trx: Transaction<Database>, threads: bigint[], which: RawBuilder<unknown>): Promise<number> {
    const { rows } = await sql<{ n: bigint }>`
      WITH d AS (
        DELETE FROM checkpoints c WHERE c.thread_pk IN (${sql.join(threads)}) AND ${which}
        RETURNING c.thread_pk, c.checkpoint_ns, c.checkpoint_id
      ),
      w AS (
        DELETE FROM checkpoint_writes cw USING d
        WHERE cw.thread_pk = d.thread_pk AND cw.checkpoint_ns = d.checkpoint_ns AND cw.checkpoint_id = d.checkpoint_id
      )
      SELECT count(*)::bigint AS n FROM d`.execute(trx);
    return Number(rows[0]?.n ?? 0n);
  }

  /** Values no remaining checkpoint of their locked thread names. */
  async #deleteUnusedValues(trx: Transaction<Database>, threads: bigint[]): Promise<void> {
    await sql`
      DELETE FROM checkpoint_values v
      WHERE v.thread_pk IN (${sql.join(threads)})
        AND NOT EXISTS (SELECT 1 FROM checkpoints c
          WHERE c.thread_pk = v.thread_pk AND c.checkpoint_ns = v.checkpoint_ns AND c.channel_versions ->> v.channel = v.version)`.execute(
      trx,
    );
  }

  /** Erasure: every thread of one user in one app. */
  async eraseUser(appName: string, userId: string): Promise<number> {
    const result = await sql`DELETE FROM checkpoint_threads WHERE app_name = ${appName} AND user_id = ${userId}`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }

  /**
   * Deletes up to `batch` threads of an app (or of every app but `except`)
   * last written before `cutoff`; SKIP LOCKED lets replicas sweep together.
   */
  async sweepExpired(scope: SweepScope, cutoff: bigint, batch: number): Promise<number> {
    const where = sweepScopeFilter(scope);
    const result = await sql`
      DELETE FROM checkpoint_threads WHERE pk IN (
        SELECT pk FROM checkpoint_threads WHERE ${where} AND update_time_ns < ${cutoff}
        ORDER BY update_time_ns LIMIT ${batch} FOR UPDATE SKIP LOCKED
      )`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }
}

function partKey(threadPk: bigint, ns: string, id: string): string {
  return `${threadPk}\u0000${ns}\u0000${id}`;
}

function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
