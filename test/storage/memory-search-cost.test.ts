import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nowNs } from "../../src/domain/time.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { type SearchQuery, searchQuery } from "../../src/storage/memory-search.js";
import { backends } from "../support/backends.js";
import { rowsRead } from "../support/plan.js";

const USERS = 20;
const PER_USER = 1000;

function search(db: Kysely<unknown>, userId: string, text: string, limit = 10): Promise<number> {
  const q: SearchQuery = { scope: { appName: "bench", userId }, text, mode: "any", limit, filter: {} };
  return rowsRead(db, searchQuery(q, { textConfig: "simple", liveSince: undefined, now: nowNs() }).compile(db), "memories");
}

// A search must cost what it finds in one user's memory, not the size of
// the table nor of the user's memory: checked on the plan (rows read from
// the table), not with a clock.
for (const backend of backends()) {
  describe.skipIf(!backend.available)(`memory search reads the index [${backend.name}]`, () => {
    let opened: OpenDatabase;
    beforeAll(async () => {
      opened = await backend.open();
      // Every entry of every user holds "common"; three entries of u7 hold "needle".
      await sql`
        INSERT INTO memories (app_name, user_id, id, timestamp_ns, create_time_ns, content, body, search)
        SELECT 'bench', 'u' || (g % ${USERS}), 'm' || g, g, g, '\\x'::bytea, b, to_tsvector('simple', b)
        FROM generate_series(1, ${USERS * PER_USER}) g,
          LATERAL (SELECT 'a common fact number ' || g || CASE WHEN g % ${USERS} = 7 AND g <= ${USERS * 3} THEN ' needle' ELSE '' END AS b) t
      `.execute(opened.db);
      await sql`ANALYZE memories`.execute(opened.db);
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("reads only the user's matching entries for a word every user has", async () => {
      // u7's 50 matching entries, plus the 10 of the page read again for their bodies.
      expect(await search(opened.db as Kysely<unknown>, "u7", "common")).toBeLessThanOrEqual(PER_USER + 10);
    });

    it("reads only the few matching entries for a rare word, not the user's whole memory", async () => {
      expect(await search(opened.db as Kysely<unknown>, "u7", "needle")).toBeLessThanOrEqual(6);
      expect(await search(opened.db as Kysely<unknown>, "u8", "needle")).toBe(0);
    });

    it("reads nothing for a user with no entries", async () => {
      expect(await search(opened.db as Kysely<unknown>, "nobody", "common")).toBe(0);
    });
  });
}
