import { type Kysely, sql } from "kysely";

// LangGraph checkpoints, laid out like langgraph-checkpoint-postgres (one row
// per checkpoint, one per (channel, version) value, one per pending write) but
// under a thread row keyed like a session, (app_name, user_id, thread_id):
// the other tables reference its surrogate key, so deleting, erasing or
// expiring a thread is one row and a cascade, and every write to a thread
// locks that one row (not a table, not the store) for the length of its
// transaction.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE checkpoint_threads (
      pk              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      app_name        text   NOT NULL,
      user_id         text   NOT NULL,
      thread_id       text   COLLATE "C" NOT NULL,
      create_time_ns  bigint NOT NULL,
      update_time_ns  bigint NOT NULL,
      CONSTRAINT checkpoint_threads_key UNIQUE (app_name, user_id, thread_id)
    )`.execute(db);
  // The retention sweep, oldest first across apps.
  await sql`CREATE INDEX checkpoint_threads_by_update_time ON checkpoint_threads (update_time_ns)`.execute(db);

  await sql`
    CREATE TABLE checkpoints (
      thread_pk             bigint NOT NULL REFERENCES checkpoint_threads (pk) ON DELETE CASCADE,
      checkpoint_ns         text   COLLATE "C" NOT NULL,
      checkpoint_id         text   COLLATE "C" NOT NULL,
      parent_checkpoint_id  text   NOT NULL,
      body_type             text   NOT NULL,
      body                  bytea  NOT NULL,
      channel_versions      jsonb  NOT NULL,
      metadata_type         text   NOT NULL,
      metadata              bytea  NOT NULL,
      metadata_json         jsonb  NOT NULL,
      run_id                text,
      create_time_ns        bigint NOT NULL,
      PRIMARY KEY (thread_pk, checkpoint_ns, checkpoint_id)
    )`.execute(db);
  // Listing a user's checkpoints across threads, newest first, goes through
  // the thread rows; DeleteRuns finds checkpoints by run.
  await sql`CREATE INDEX checkpoints_by_run ON checkpoints (run_id) WHERE run_id IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE checkpoint_values (
      thread_pk      bigint NOT NULL REFERENCES checkpoint_threads (pk) ON DELETE CASCADE,
      checkpoint_ns  text   NOT NULL,
      channel        text   NOT NULL,
      version        text   NOT NULL,
      value_type     text,
      value          bytea,
      PRIMARY KEY (thread_pk, checkpoint_ns, channel, version)
    )`.execute(db);

  await sql`
    CREATE TABLE checkpoint_writes (
      thread_pk      bigint  NOT NULL REFERENCES checkpoint_threads (pk) ON DELETE CASCADE,
      checkpoint_ns  text    NOT NULL,
      checkpoint_id  text    NOT NULL,
      task_id        text    NOT NULL,
      idx            integer NOT NULL,
      task_path      text    NOT NULL,
      channel        text    NOT NULL,
      value_type     text    NOT NULL,
      value          bytea   NOT NULL,
      PRIMARY KEY (thread_pk, checkpoint_ns, checkpoint_id, task_id, idx)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE checkpoint_writes`.execute(db);
  await sql`DROP TABLE checkpoint_values`.execute(db);
  await sql`DROP TABLE checkpoints`.execute(db);
  await sql`DROP TABLE checkpoint_threads`.execute(db);
}
