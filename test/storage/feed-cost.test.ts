import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitState } from "../../src/domain/state.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { headQuery, scopeQuery } from "../../src/storage/event-log.js";
import type { LogPosition } from "../../src/storage/log-position.js";
import type { Database } from "../../src/storage/schema.js";
import { SessionStore } from "../../src/storage/session-store.js";
import { backends } from "../support/backends.js";
import { rowsRead as planRows } from "../support/plan.js";

function rowsRead(db: Kysely<Database>, after: LogPosition, limit: number, appName?: string): Promise<number> {
  return planRows(db as Kysely<unknown>, scopeQuery({ appName }, after, limit).compile(db), "events");
}

const HISTORY = 20_000;

// The live feed runs this on every wake: its cost must follow the rows it
// returns, not the size of the table (a per-row full scan here once made live
// tails seconds late on a large table).
for (const backend of backends()) {
  describe.skipIf(!backend.available)(`live feed reads [${backend.name}]`, () => {
    let opened: OpenDatabase;
    let last: LogPosition;
    beforeAll(async () => {
      opened = await backend.open();
      const store = new SessionStore(opened.db);
      await store.createSession({ appName: "feed", userId: "u", sessionId: "s" }, splitState({}));
      const { pk } = await opened.db.selectFrom("sessions").select("pk").executeTakeFirstOrThrow();
      await sql`
        INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
        SELECT ${pk}, g, 'e' || g, g, '\\x'::bytea, 'feed', 'u' FROM generate_series(1, ${HISTORY}) g`.execute(opened.db);
      await sql`ANALYZE events`.execute(opened.db);
      const { rows } = await sql<{
        tx: string;
        pos: bigint;
      }>`SELECT tx::text AS tx, pos FROM events ORDER BY tx DESC, pos DESC LIMIT 1`.execute(opened.db);
      last = { tx: BigInt(rows[0]?.tx ?? "0"), pos: (rows[0]?.pos ?? 0n) - 10n };
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("reads only the new rows after a position near the end", async () => {
      expect(await rowsRead(opened.db, last, 500)).toBeLessThanOrEqual(20);
      expect(await rowsRead(opened.db, last, 500, "feed")).toBeLessThanOrEqual(20);
    });

    it("finds where a live-only tail starts from one index entry", async () => {
      for (const filter of [{ appName: "feed" }, { appName: "feed", userId: "u" }]) {
        expect(await planRows(opened.db as Kysely<unknown>, headQuery(opened.db, filter).compile(), "events")).toBe(1);
      }
    });

    it("reads at most a batch from the start (the control)", async () => {
      // Rows above the watermark are filtered, not returned: wait until no
      // transaction elsewhere in the cluster (another test's) holds it below them.
      for (;;) {
        const { rows } = await sql<{ below: boolean }>`
          SELECT pg_snapshot_xmin(pg_current_snapshot()) > max(tx) AS below FROM events`.execute(opened.db);
        if (rows[0]?.below) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const read = await rowsRead(opened.db, { tx: 0n, pos: 0n }, 500);
      expect(read).toBeGreaterThanOrEqual(500);
      expect(read).toBeLessThanOrEqual(502);
    });
  });
}
