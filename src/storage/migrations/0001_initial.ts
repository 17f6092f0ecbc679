import { type Kysely, sql } from "kysely";

// Sessions get a surrogate key so that events reference one bigint instead of
// the (app_name, user_id, id) triple.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE sessions (
      pk              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      app_name        text   NOT NULL,
      user_id         text   NOT NULL,
      id              text   NOT NULL,
      state           jsonb  NOT NULL DEFAULT '{}',
      revision        bigint NOT NULL DEFAULT 0,
      create_time_ns  bigint NOT NULL,
      update_time_ns  bigint NOT NULL,
      CONSTRAINT sessions_key UNIQUE (app_name, user_id, id)
    )`.execute(db);
  // Keyset pagination of ListSessions, per user and across an app.
  await sql`CREATE INDEX sessions_user_listing ON sessions (app_name, user_id, update_time_ns, id)`.execute(db);
  await sql`CREATE INDEX sessions_app_listing ON sessions (app_name, update_time_ns, id, user_id)`.execute(db);

  await sql`
    CREATE TABLE events (
      session_pk    bigint NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
      seq           bigint NOT NULL,
      event_id      text   NOT NULL,
      timestamp_ns  bigint NOT NULL,
      body          bytea  NOT NULL,
      PRIMARY KEY (session_pk, seq),
      CONSTRAINT events_event_id UNIQUE (session_pk, event_id)
    )`.execute(db);
  // after_timestamp windows read only the events they return.
  await sql`CREATE INDEX events_by_time ON events (session_pk, timestamp_ns)`.execute(db);

  await sql`
    CREATE TABLE app_states (
      app_name        text   PRIMARY KEY,
      state           jsonb  NOT NULL DEFAULT '{}',
      update_time_ns  bigint NOT NULL
    )`.execute(db);
  await sql`
    CREATE TABLE user_states (
      app_name        text   NOT NULL,
      user_id         text   NOT NULL,
      state           jsonb  NOT NULL DEFAULT '{}',
      update_time_ns  bigint NOT NULL,
      PRIMARY KEY (app_name, user_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE events, sessions, user_states, app_states`.execute(db);
}
