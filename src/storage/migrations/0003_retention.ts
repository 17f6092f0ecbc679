import { type Kysely, sql } from "kysely";

// The sweeper deletes expired sessions of every app without its own policy
// in one pass, oldest first: that needs update time without the app in front.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX sessions_by_update_time ON sessions (update_time_ns)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX sessions_by_update_time`.execute(db);
}
