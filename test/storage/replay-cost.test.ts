import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitState } from "../../src/domain/state.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import type { Database } from "../../src/storage/schema.js";
import { replayQuery, SessionStore } from "../../src/storage/session-store.js";
import { backends } from "../support/backends.js";
import { rowsRead } from "../support/plan.js";

const HISTORY = 3000;

// A replay to seq N must read N events, not the session's whole history:
// checked on the query plan (rows actually read), not with a clock.
for (const backend of backends()) {
  describe.skipIf(!backend.available)(`state replay reads [${backend.name}]`, () => {
    let opened: OpenDatabase;
    let pk: bigint;
    const read = (asOf: number) =>
      rowsRead(opened.db as Kysely<unknown>, replayQuery(opened.db as Kysely<Database>, pk, BigInt(asOf)).compile(), "events");
    beforeAll(async () => {
      opened = await backend.open();
      await new SessionStore(opened.db).createSession({ appName: "bench", userId: "u", sessionId: "long" }, splitState({}));
      pk = (await opened.db.selectFrom("sessions").select("pk").executeTakeFirstOrThrow()).pk;
      await sql`
        INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
        SELECT ${pk}, g, 'e' || g, g * 1000000000::bigint, '\\x'::bytea, 'bench', 'u' FROM generate_series(1, ${HISTORY}) g`.execute(
        opened.db,
      );
      await sql`UPDATE sessions SET revision = ${HISTORY} WHERE pk = ${pk}`.execute(opened.db);
      await sql`ANALYZE events`.execute(opened.db);
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("reads only the events up to as_of_seq", async () => {
      expect(await read(10)).toBeLessThanOrEqual(10);
      expect(await read(1)).toBeLessThanOrEqual(1);
      expect(await read(HISTORY)).toBe(HISTORY);
    });
  });
}
