import { type Kysely, sql } from "kysely";

// Positions for live tails across sessions. `tx` is the writing transaction's
// id: every row with tx below the oldest running transaction
// (pg_snapshot_xmin) is final, so a tail that reads in (tx, pos) order up to
// that mark never skips a row that commits late. Appends to one session hold
// its row lock until commit and take their transaction id after it, so
// (tx, pos) order is seq order within a session. app_name and user_id are
// copied from the session so wide tails read through their own index.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE events
      ADD COLUMN pos      bigint GENERATED ALWAYS AS IDENTITY,
      ADD COLUMN tx       xid8   NOT NULL DEFAULT pg_current_xact_id(),
      ADD COLUMN app_name text,
      ADD COLUMN user_id  text`.execute(db);
  await sql`
    UPDATE events e SET app_name = s.app_name, user_id = s.user_id
    FROM sessions s WHERE s.pk = e.session_pk`.execute(db);
  await sql`ALTER TABLE events ALTER COLUMN app_name SET NOT NULL, ALTER COLUMN user_id SET NOT NULL`.execute(db);
  await sql`CREATE INDEX events_feed ON events (tx, pos)`.execute(db);
  await sql`CREATE INDEX events_app_feed ON events (app_name, tx, pos)`.execute(db);
  await sql`CREATE INDEX events_user_feed ON events (app_name, user_id, tx, pos)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events DROP COLUMN pos, DROP COLUMN tx, DROP COLUMN app_name, DROP COLUMN user_id`.execute(db);
}
