import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";
import { type SessionStore, type StoredSession, toStoredSession } from "./session-store.js";

/** The web console's reads that SessionService has no RPC for. */
export class ConsoleQueries {
  readonly #db: Kysely<Database>;
  readonly #store: SessionStore;

  constructor(db: Kysely<Database>, store: SessionStore) {
    this.#db = db;
    this.#store = store;
  }

  /**
   * App names with sessions, after `after`, in name order. A skip scan: one
   * probe of the (app_name, …) index per app, so the cost follows the number
   * of apps returned, not of sessions. An app whose sessions have all
   * expired is listed until the sweeper deletes them.
   */
  async listApps(after: string | undefined, limit: number): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`
      WITH RECURSIVE apps (name) AS (
        SELECT (SELECT min(app_name) FROM sessions WHERE ${after === undefined ? sql`true` : sql`app_name > ${after}`})
        UNION ALL
        SELECT (SELECT min(app_name) FROM sessions WHERE app_name > apps.name) FROM apps WHERE apps.name IS NOT NULL
      )
      SELECT name FROM apps WHERE name IS NOT NULL LIMIT ${limit}`.execute(this.#db);
    return rows.map((r) => r.name);
  }

  /**
   * Sessions of one app with this id, of any user (or of `userId` only), by
   * user id. Reads the app's rows of the listing index: ids are unique per
   * user, and no index leads with the id.
   */
  async findSessions(appName: string, sessionId: string, userId: string | undefined, limit: number): Promise<StoredSession[]> {
    const cutoff = this.#store.policies.liveSince(appName);
    const rows = await this.#db
      .selectFrom("sessions as s")
      .leftJoin("user_states as u", (join) => join.onRef("u.app_name", "=", "s.app_name").onRef("u.user_id", "=", "s.user_id"))
      .leftJoin("app_states as a", "a.app_name", "s.app_name")
      .select(["s.app_name", "s.user_id", "s.id", "s.state", "s.revision", "s.create_time_ns", "s.update_time_ns"])
      .select(["u.state as user_state", "a.state as app_state"])
      .where("s.app_name", "=", appName)
      .where("s.id", "=", sessionId)
      .$if(userId !== undefined, (qb) => qb.where("s.user_id", "=", userId as string))
      .$if(cutoff !== undefined, (qb) => qb.where("s.update_time_ns", ">=", cutoff as bigint))
      .orderBy("s.user_id")
      .limit(limit)
      .execute();
    return rows.map((row) => toStoredSession(row));
  }
}
