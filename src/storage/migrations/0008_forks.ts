import { type Kysely, sql } from "kysely";

// Where a session made by ForkSession came from: the id of the session it
// copied (same app and user) and the last event it copied. NULL for every
// other session. Kept as the id, not a key: the source may be deleted later
// and the fork stays what it is.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN forked_from_id text, ADD COLUMN forked_at_seq bigint`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions DROP COLUMN forked_from_id, DROP COLUMN forked_at_seq`.execute(db);
}
