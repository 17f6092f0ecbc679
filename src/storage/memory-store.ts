import type { JsonObject } from "@bufbuild/protobuf";
import { type Kysely, type RawBuilder, sql } from "kysely";
import { NotFound, OverLimit, Unsupported } from "../domain/outcomes.js";
import { nowNs } from "../domain/time.js";
import { PolicySet } from "../policy/app-policy.js";
import type { MemoryPolicy } from "../policy/memory-policy.js";
import { type SearchQuery, searchQuery } from "./memory-search.js";
import { filterSql, liveScope, MEMORY_COLUMNS, type MemoryFilterQuery, type MemoryRow, type MemoryScope } from "./memory-sql.js";
import { weighTerms } from "./memory-terms.js";
import type { Database } from "./schema.js";
import { type SweepScope, sweepScopeFilter } from "./sweep-scope.js";

export type { SearchQuery } from "./memory-search.js";
export type { MemoryFilterQuery, MemoryScope } from "./memory-sql.js";

/** An entry ready to store: validated, redacted, its id fixed. */
export interface NewMemory {
  id: string;
  namespace: string;
  author: string;
  timestampNs: bigint;
  expireTimeNs?: bigint | undefined;
  /** Provenance; empty for an explicit entry. */
  sessionId: string;
  eventId: string;
  /** The protobuf encoding of the entry's sessionstore.v1.Content. */
  content: Uint8Array;
  metadata: JsonObject;
  /** The text search reads: the content's text parts. */
  body: string;
  embedding?: number[] | undefined;
}

export interface StoredMemory {
  appName: string;
  userId: string;
  id: string;
  namespace: string;
  author: string;
  timestampNs: bigint;
  createTimeNs: bigint;
  /** The earlier of the entry's own expiry and the app's retention. */
  expireTimeNs: bigint | undefined;
  sessionId: string;
  eventId: string;
  content: Uint8Array;
  metadata: JsonObject;
  hasEmbedding: boolean;
}

export interface SearchHit {
  memory: StoredMemory;
  score: number;
  highlight: string;
  textScore: number | undefined;
  vectorDistance: number | undefined;
}

/** Most dimensions an embedding may have (pgvector's own limit for `vector`). */
export const MAX_EMBEDDING_DIMENSIONS = 16_000;

/**
 * Every query of MemoryService, the same SQL on PGlite and PostgreSQL. Reads
 * treat expired entries (their own expiry, or older than the app's memory
 * retention) as gone before the sweeper deletes them.
 */
export class MemoryStore {
  readonly #db: Kysely<Database>;
  readonly #policies: PolicySet;
  #vector: Promise<boolean> | undefined;

  constructor(db: Kysely<Database>, options: { policies?: PolicySet } = {}) {
    this.#db = db;
    this.#policies = options.policies ?? new PolicySet();
  }

  policy(appName: string): MemoryPolicy {
    return this.#policies.for(appName).memory;
  }

  /** Entries stored before this instant are past the app's retention. */
  liveSince(appName: string): bigint | undefined {
    const ttl = this.policy(appName).ttlSeconds;
    return ttl === undefined ? undefined : nowNs() - BigInt(ttl) * 1_000_000_000n;
  }

  /** Whether pgvector is installed in this database (checked once per process). */
  vectorSupport(): Promise<boolean> {
    this.#vector ??= sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'`
      .execute(this.#db)
      .then((r) => (r.rows[0]?.n ?? 0) > 0);
    return this.#vector;
  }

  async requireVectors(what: string): Promise<void> {
    if (!(await this.vectorSupport())) {
      throw new Unsupported(
        `${what} needs vector search, which this store does not have: install pgvector in the PostgreSQL database (CREATE EXTENSION vector) and restart, or send no embedding`,
      );
    }
  }

  /** Refuses to start with a text search configuration the database does not know. */
  async checkTextConfigs(names: string[]): Promise<void> {
    const wanted = [...new Set(names)];
    const { rows } = await sql<{ cfgname: string }>`SELECT cfgname FROM pg_ts_config WHERE cfgname = ANY(${wanted}::text[])`.execute(
      this.#db,
    );
    const known = new Set(rows.map((r) => r.cfgname));
    const missing = wanted.filter((n) => !known.has(n));
    if (missing.length > 0) {
      throw new Error(`memory.textConfig names unknown text search configuration(s): ${missing.join(", ")}`);
    }
  }

  #checkSize(scope: MemoryScope, entry: NewMemory): void {
    const max = this.policy(scope.appName).maxMemoryBytes;
    const size = entry.content.length + JSON.stringify(entry.metadata).length;
    if (size > max) {
      throw new OverLimit(
        `memory "${entry.id}" would be ${size} bytes (content and metadata), over the limit maxMemoryBytes = ${max}; nothing was written`,
        "maxMemoryBytes",
        size,
        max,
      );
    }
  }

  /**
   * Stores entries in one transaction. Explicit entries (no event id)
   * replace an entry with the same id; entries derived from an event are
   * skipped when that event was already ingested. `ingested`, when given,
   * moves the session's ingestion mark forward in the same transaction.
   * Answers the entries actually written.
   */
  async put(scope: MemoryScope, entries: NewMemory[], ingested?: { sessionId: string; lastSeq: bigint }): Promise<StoredMemory[]> {
    for (const entry of entries) this.#checkSize(scope, entry);
    if (entries.some((e) => e.embedding !== undefined)) await this.requireVectors("an entry with an embedding");
    const policy = this.policy(scope.appName);
    const now = nowNs();
    return this.#db.transaction().execute(async (trx) => {
      const written: StoredMemory[] = [];
      for (const entry of entries) {
        const embedding = entry.embedding === undefined ? null : sql`${`{${entry.embedding.join(",")}}`}::real[]`;
        const values = sql`(
          ${scope.appName}, ${scope.userId}, ${entry.id}, ${entry.namespace}, ${entry.author}, ${entry.timestampNs}, ${now},
          ${entry.expireTimeNs ?? null}::bigint, ${entry.sessionId}, ${entry.eventId}, ${entry.content},
          ${JSON.stringify(entry.metadata)}::jsonb, ${entry.body}, to_tsvector(${policy.textConfig}::regconfig, ${entry.body}), ${embedding}
        )`;
        const conflict =
          entry.eventId === ""
            ? sql`ON CONFLICT ON CONSTRAINT memories_key DO UPDATE SET
                namespace = excluded.namespace, author = excluded.author, timestamp_ns = excluded.timestamp_ns,
                create_time_ns = excluded.create_time_ns, expire_time_ns = excluded.expire_time_ns,
                session_id = excluded.session_id, event_id = excluded.event_id, content = excluded.content,
                custom_metadata = excluded.custom_metadata, body = excluded.body, search = excluded.search,
                embedding = excluded.embedding`
            : sql`ON CONFLICT DO NOTHING`;
        const { rows } = await sql<MemoryRow>`
          INSERT INTO memories AS m (app_name, user_id, id, namespace, author, timestamp_ns, create_time_ns, expire_time_ns,
            session_id, event_id, content, custom_metadata, body, search, embedding)
          VALUES ${values}
          ${conflict}
          RETURNING ${MEMORY_COLUMNS}`.execute(trx);
        for (const row of rows) written.push(this.#toStored(row));
      }
      if (ingested) {
        await sql`
          INSERT INTO memory_ingests (app_name, user_id, session_id, last_seq)
          VALUES (${scope.appName}, ${scope.userId}, ${ingested.sessionId}, ${ingested.lastSeq})
          ON CONFLICT (app_name, user_id, session_id) DO UPDATE SET last_seq = greatest(memory_ingests.last_seq, excluded.last_seq)`.execute(
          trx,
        );
      }
      if (written.length > 0) {
        // The user's count kept by memory_terms' triggers (migration 0011): one row, not a count of the user's entries.
        const { rows } = await sql<{ n: bigint }>`
          SELECT entries AS n FROM memory_terms
          WHERE app_name = ${scope.appName} AND user_id = ${scope.userId} AND lexeme = ''`.execute(trx);
        const count = Number(rows[0]?.n ?? 0);
        if (count > policy.maxMemoriesPerUser) {
          throw new OverLimit(
            `user "${scope.userId}" would have ${count} memories, over the limit maxMemoriesPerUser = ${policy.maxMemoriesPerUser}; nothing was written`,
            "maxMemoriesPerUser",
            count,
            policy.maxMemoriesPerUser,
          );
        }
      }
      return written;
    });
  }

  /** The highest seq of a session already ingested (0 when none). */
  async ingestedUpTo(scope: MemoryScope, sessionId: string): Promise<bigint> {
    const { rows } = await sql<{ last_seq: bigint }>`
      SELECT last_seq FROM memory_ingests
      WHERE app_name = ${scope.appName} AND user_id = ${scope.userId} AND session_id = ${sessionId}`.execute(this.#db);
    return rows[0]?.last_seq ?? 0n;
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    if (query.embedding !== undefined) await this.requireVectors("a search with a query embedding");
    const policy = this.policy(query.scope.appName);
    const liveSince = this.liveSince(query.scope.appName);
    const now = nowNs();
    let q = query;
    if (q.mode === "any" && q.text.trim() !== "") {
      const { terms } = await weighTerms(this.#db, q.scope, policy.textConfig, q.text);
      // No word of the query is in the user's memory: the text ranking is empty.
      if (terms.length === 0) {
        if (q.embedding === undefined) return [];
        q = { ...q, text: "" };
      } else {
        q = { ...q, terms };
      }
    }
    const { rows } = await searchQuery(q, { textConfig: policy.textConfig, liveSince, now }).execute(this.#db);
    return rows.map((row) => ({
      memory: this.#toStored(row),
      score: Number(row.score),
      highlight: row.highlight ?? "",
      textScore: row.text_score === null ? undefined : Number(row.text_score),
      vectorDistance: row.vector_distance === null ? undefined : Number(row.vector_distance),
    }));
  }

  /** Newest first; `beforePk` continues a listing. */
  async list(
    scope: MemoryScope,
    filter: MemoryFilterQuery,
    limit: number,
    beforePk?: bigint,
  ): Promise<{ pk: bigint; memory: StoredMemory }[]> {
    const { rows } = await sql<MemoryRow>`
      SELECT ${MEMORY_COLUMNS} FROM memories m
      WHERE ${liveScope(scope, this.liveSince(scope.appName), nowNs())} AND ${filterSql(filter)}
        ${beforePk === undefined ? sql`` : sql`AND m.pk < ${beforePk}`}
      ORDER BY m.pk DESC LIMIT ${limit}`.execute(this.#db);
    return rows.map((row) => ({ pk: row.pk, memory: this.#toStored(row) }));
  }

  async get(scope: MemoryScope, id: string): Promise<StoredMemory> {
    const { rows } = await sql<MemoryRow>`
      SELECT ${MEMORY_COLUMNS} FROM memories m
      WHERE ${liveScope(scope, this.liveSince(scope.appName), nowNs())} AND m.id = ${id}`.execute(this.#db);
    const row = rows[0];
    if (!row) throw new NotFound(`memory "${id}" not found for app "${scope.appName}" and user "${scope.userId}"`);
    return this.#toStored(row);
  }

  async delete(scope: MemoryScope, id: string): Promise<boolean> {
    const result = await sql`DELETE FROM memories WHERE app_name = ${scope.appName} AND user_id = ${scope.userId} AND id = ${id}`.execute(
      this.#db,
    );
    return (result.numAffectedRows ?? 0n) > 0n;
  }

  /** Every entry derived from one session; a later AddSessionToMemory ingests the session afresh. */
  async deleteBySession(scope: MemoryScope, sessionId: string): Promise<number> {
    return this.#db.transaction().execute(async (trx) => {
      const result = await sql`
        DELETE FROM memories
        WHERE app_name = ${scope.appName} AND user_id = ${scope.userId} AND session_id = ${sessionId} AND event_id <> ''`.execute(trx);
      await sql`
        DELETE FROM memory_ingests
        WHERE app_name = ${scope.appName} AND user_id = ${scope.userId} AND session_id = ${sessionId}`.execute(trx);
      return Number(result.numAffectedRows ?? 0n);
    });
  }

  /** Erasure: every entry of one user in one app. */
  async eraseUser(scope: MemoryScope): Promise<number> {
    return this.#db.transaction().execute(async (trx) => {
      const result = await sql`DELETE FROM memories WHERE app_name = ${scope.appName} AND user_id = ${scope.userId}`.execute(trx);
      await sql`DELETE FROM memory_ingests WHERE app_name = ${scope.appName} AND user_id = ${scope.userId}`.execute(trx);
      return Number(result.numAffectedRows ?? 0n);
    });
  }

  /**
   * Deletes up to `batch` expired entries: past their own expiry, or (with
   * `cutoff`) stored before it, in one app or every app but `except`.
   */
  async sweepExpired(scope: SweepScope | undefined, cutoff: bigint | undefined, batch: number): Promise<number> {
    let where: RawBuilder<unknown>;
    if (scope === undefined || cutoff === undefined) {
      where = sql`expire_time_ns < ${nowNs()}`;
    } else {
      const apps = sweepScopeFilter(scope);
      where = sql`${apps} AND create_time_ns < ${cutoff}`;
    }
    const result = await sql`
      WITH expired AS (SELECT pk FROM memories WHERE ${where} LIMIT ${batch} FOR UPDATE SKIP LOCKED)
      DELETE FROM memories m USING expired WHERE m.pk = expired.pk`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n);
  }

  #toStored(row: MemoryRow): StoredMemory {
    const ttl = this.policy(row.app_name).ttlSeconds;
    const retained = ttl === undefined ? undefined : row.create_time_ns + BigInt(ttl) * 1_000_000_000n;
    const own = row.expire_time_ns ?? undefined;
    return {
      appName: row.app_name,
      userId: row.user_id,
      id: row.id,
      namespace: row.namespace,
      author: row.author,
      timestampNs: row.timestamp_ns,
      createTimeNs: row.create_time_ns,
      expireTimeNs: own === undefined ? retained : retained === undefined || own < retained ? own : retained,
      sessionId: row.session_id,
      eventId: row.event_id,
      content: row.content,
      metadata: (row.custom_metadata as JsonObject | null) ?? {},
      hasEmbedding: row.has_embedding,
    };
  }
}
