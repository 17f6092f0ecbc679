import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitState } from "../../src/domain/state.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { sessionWindowQuery } from "../../src/storage/read-queries.js";
import type { Database } from "../../src/storage/schema.js";
import { type EventWindow, SessionStore } from "../../src/storage/session-store.js";
import { backends } from "../support/backends.js";
import { rowsRead as planRows } from "../support/plan.js";

const KEY = { appName: "bench", userId: "u", sessionId: "long" };

// The whole GetSession statement (session row, states and window in one).
function rowsRead(db: Kysely<Database>, _sessionPk: bigint, _revision: bigint, window: EventWindow): Promise<number> {
  return planRows(db as Kysely<unknown>, sessionWindowQuery(KEY, undefined, window), "events");
}

const HISTORY = 3000;

// The cost of a windowed GetSession must follow the window, not the history:
// checked on the query plan (rows actually read), not with a clock.
for (const backend of backends()) {
  describe.skipIf(!backend.available)(`windowed reads [${backend.name}]`, () => {
    let opened: OpenDatabase;
    let pk: bigint;
    beforeAll(async () => {
      opened = await backend.open();
      const store = new SessionStore(opened.db);
      await store.createSession(KEY, splitState({}));
      // Bulk-load the history in one statement; appending 3,000 events one by one adds nothing to this test.
      const row = await opened.db.selectFrom("sessions").select("pk").executeTakeFirstOrThrow();
      pk = row.pk;
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

    it("reads only the N most recent rows for num_recent_events = N", async () => {
      expect(await rowsRead(opened.db, pk, BigInt(HISTORY), { numRecent: 20 })).toBeLessThanOrEqual(20);
      expect(await rowsRead(opened.db, pk, BigInt(HISTORY), { numRecent: 1 })).toBeLessThanOrEqual(1);
    });

    it("reads only the rows at or after after_timestamp", async () => {
      const after = BigInt(HISTORY - 10) * 1_000_000_000n;
      expect(await rowsRead(opened.db, pk, BigInt(HISTORY), { afterNs: after })).toBeLessThanOrEqual(11);
    });

    it("reads every row for an unwindowed read (the control)", async () => {
      expect(await rowsRead(opened.db, pk, BigInt(HISTORY), {})).toBe(HISTORY);
    });
  });
}
