import { type Kysely, sql } from "kysely";

// The state a session was created with (after redaction, without `temp:`
// keys, app: and user: keys with their prefixes), kept apart from the live
// state so that the state after any event can be replayed: this plus the
// fold of the events' deltas (GetSession's as_of_seq). NULL for sessions
// created before this migration: their create-time state was not kept and
// cannot be recovered from the live state, so they cannot be replayed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN initial_state jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions DROP COLUMN initial_state`.execute(db);
}
