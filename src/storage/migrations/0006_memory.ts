import { type Kysely, sql } from "kysely";

// MemoryService: what an agent learned about a user, searched by words (and
// embeddings where pgvector is installed).
//
// btree_gin lets one GIN index hold the user and the words, so a search
// reads the postings of that user's matching entries only, not every user's
// entries with the word nor every entry of the user. (The app is checked on
// the rows found: with it in the index, the planner costs the posting list
// of a big app and reads the user's whole memory instead.) fastupdate is off:
// entries waiting in a GIN pending list are read on every search until a
// vacuum merges them, and PGlite has no autovacuum. Both extensions
// ship with PGlite (loaded in database.ts) and are "trusted" on PostgreSQL
// (a database owner may create them); where one is missing or may not be
// created, memory still works: without btree_gin the index holds only the
// words, without pgvector a request with an embedding is refused.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DO $$
    DECLARE
      ext text;
    BEGIN
      FOREACH ext IN ARRAY ARRAY['btree_gin', 'vector'] LOOP
        IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = ext) THEN
          BEGIN
            EXECUTE format('CREATE EXTENSION IF NOT EXISTS %I', ext);
          EXCEPTION WHEN insufficient_privilege OR feature_not_supported OR undefined_file THEN
            RAISE NOTICE 'sessionstore: extension % not created: %', ext, SQLERRM;
          END;
        END IF;
      END LOOP;
    END $$`.execute(db);

  // `body` is the text of the content's text parts (redacted), which search
  // reads and highlights; `content` is the whole sessionstore.v1.Content as
  // protobuf. `search` is built with the app's text configuration at write
  // time. Embeddings are real[] so that the table is the same with or
  // without pgvector; searches cast them to vector. Empty session_id /
  // event_id: an explicit entry, not derived from an event.
  await sql`
    CREATE TABLE memories (
      pk               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      app_name         text     NOT NULL,
      user_id          text     NOT NULL,
      id               text     NOT NULL,
      namespace        text     NOT NULL DEFAULT '',
      author           text     NOT NULL DEFAULT '',
      timestamp_ns     bigint   NOT NULL,
      create_time_ns   bigint   NOT NULL,
      expire_time_ns   bigint,
      session_id       text     NOT NULL DEFAULT '',
      event_id         text     NOT NULL DEFAULT '',
      content          bytea    NOT NULL,
      custom_metadata  jsonb    NOT NULL DEFAULT '{}',
      body             text     NOT NULL,
      search           tsvector NOT NULL,
      embedding        real[],
      CONSTRAINT memories_key UNIQUE (app_name, user_id, id)
    )`.execute(db);
  // Idempotent ingestion, and deletion by source session.
  await sql`
    CREATE UNIQUE INDEX memories_source ON memories (app_name, user_id, session_id, event_id) WHERE event_id <> ''`.execute(db);
  // ListMemories, newest first, keyset on pk.
  await sql`CREATE INDEX memories_listing ON memories (app_name, user_id, pk)`.execute(db);
  // Retention: per-app time-to-live from the time stored, and per-entry expiry.
  await sql`CREATE INDEX memories_by_create_time ON memories (create_time_ns)`.execute(db);
  await sql`CREATE INDEX memories_by_expiry ON memories (expire_time_ns) WHERE expire_time_ns IS NOT NULL`.execute(db);
  await sql`
    DO $$
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX memories_search ON memories USING gin (user_id, search) WITH (fastupdate = off);
      ELSE
        CREATE INDEX memories_search ON memories USING gin (search) WITH (fastupdate = off);
      END IF;
    END $$`.execute(db);

  // How far AddSessionToMemory has read each session: a second call reads
  // only the events stored since.
  await sql`
    CREATE TABLE memory_ingests (
      app_name    text   NOT NULL,
      user_id     text   NOT NULL,
      session_id  text   NOT NULL,
      last_seq    bigint NOT NULL,
      PRIMARY KEY (app_name, user_id, session_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE memory_ingests, memories`.execute(db);
}
