import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nowNs } from "../../src/domain/time.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { type SearchQuery, searchQuery } from "../../src/storage/memory-search.js";
import { COUNT_CAP, termCountsQuery, weighTerms } from "../../src/storage/memory-terms.js";
import { backends } from "../support/backends.js";
import { rowsRead } from "../support/plan.js";

const USERS = 20;
const PER_USER = 1000;

/**
 * Rows a search reads: weighing the query's words (rows of the entries
 * and of the word counts), then the search itself (as MemoryStore.search
 * runs them).
 */
async function search(
  opened: OpenDatabase,
  userId: string,
  text: string,
  limit = 10,
): Promise<{ weighing: number; counts: number; search: number }> {
  const db = opened.db as Kysely<unknown>;
  const scope = { appName: "bench", userId };
  const weighingQuery = termCountsQuery(scope, "simple", text).compile(db);
  const weighing = await rowsRead(db, weighingQuery, "memories");
  const counts = await rowsRead(db, weighingQuery, "memory_terms");
  const { terms } = await weighTerms(opened.db, scope, "simple", text);
  if (terms.length === 0) return { weighing, counts, search: 0 };
  const q: SearchQuery = { scope, text, mode: "any", limit, filter: {}, terms };
  return {
    weighing,
    counts,
    search: await rowsRead(db, searchQuery(q, { textConfig: "simple", liveSince: undefined, now: nowNs() }).compile(db), "memories"),
  };
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

    it("reads only the few entries holding a rare word, not the user's whole memory", async () => {
      const cost = await search(opened, "u7", "needle");
      // Weighing reads no entry: the user's count and the word's, one row each.
      expect(cost.weighing).toBe(0);
      expect(cost.counts).toBeLessThanOrEqual(2);
      // The three entries, and the same three again for their bodies.
      expect(cost.search).toBeLessThanOrEqual(6);
      expect((await search(opened, "u8", "needle")).search).toBe(0);
    });

    it("selects by the telling word of a question: common words rank, they do not select", async () => {
      const cost = await search(opened, "u7", "is there a common fact with the needle");
      // One count per word (8 words, 4 of them held) and the user's.
      expect(cost.weighing).toBe(0);
      expect(cost.counts).toBeLessThanOrEqual(9);
      expect(cost.search).toBeLessThanOrEqual(6);
    });

    it("reads a bounded part of the user's memory for a word every entry holds (nothing tells them apart)", async () => {
      const cost = await search(opened, "u7", "common");
      // The newest COUNT_CAP of u7's PER_USER matching entries, plus the 10 of the page read again for their bodies.
      expect(COUNT_CAP).toBeLessThan(PER_USER);
      expect(cost.search).toBeLessThanOrEqual(COUNT_CAP + 10);
    });

    it("keeps the request's filter when no word selects: the bound applies to the entries the filter lets through", async () => {
      const scope = { appName: "bench", userId: "u7" };
      const { terms } = await weighTerms(opened.db, scope, "simple", "common");
      expect(terms.some((t) => t.selective)).toBe(false);
      // u7's oldest entries (timestamps 7, 27, 47, 67, 87), far behind the newest COUNT_CAP.
      const q: SearchQuery = { scope, text: "common", mode: "any", limit: 10, filter: { endNs: 100n }, terms };
      const { rows } = await searchQuery(q, { textConfig: "simple", liveSince: undefined, now: nowNs() }).execute(opened.db);
      expect(rows.map((r) => r.id).sort()).toEqual(["m27", "m47", "m67", "m7", "m87"]);
    });

    it("reads nothing for a user with no entries", async () => {
      expect(await search(opened, "nobody", "common")).toEqual({ weighing: 0, counts: 0, search: 0 });
    });
  });
}
