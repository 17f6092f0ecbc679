import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nowNs } from "../../src/domain/time.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { MemoryStore, type NewMemory } from "../../src/storage/memory-store.js";
import { weighTerms } from "../../src/storage/memory-terms.js";
import { backends } from "../support/backends.js";

const U1 = { appName: "app", userId: "u1" };
const U2 = { appName: "app", userId: "u2" };

function entry(id: string, body: string, extra: Partial<NewMemory> = {}): NewMemory {
  return {
    id,
    namespace: "",
    author: "user",
    timestampNs: 1n,
    sessionId: "",
    eventId: "",
    content: new Uint8Array(),
    metadata: {},
    body,
    ...extra,
  };
}

type Count = { app_name: string; user_id: string; lexeme: string; entries: number };

/** The word counts the triggers keep, and the same counted afresh from the entries. */
async function counts(opened: OpenDatabase): Promise<{ kept: Count[]; recounted: Count[] }> {
  const kept = await sql<Count>`
    SELECT app_name, user_id, lexeme, entries::int AS entries FROM memory_terms ORDER BY 1, 2, 3`.execute(opened.db);
  const recounted = await sql<Count>`
    SELECT m.app_name, m.user_id, l.lexeme, count(*)::int AS entries
    FROM memories m, unnest(array_prepend('', tsvector_to_array(m.search))) AS l(lexeme)
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`.execute(opened.db);
  return { kept: kept.rows, recounted: recounted.rows };
}

async function count(opened: OpenDatabase, scope: typeof U1, lexeme: string): Promise<number | undefined> {
  const { rows } = await sql<{ entries: number }>`
    SELECT entries::int AS entries FROM memory_terms
    WHERE app_name = ${scope.appName} AND user_id = ${scope.userId} AND lexeme = ${lexeme}`.execute(opened.db);
  return rows[0]?.entries;
}

// Search weighs a question's words by the counts in memory_terms, which
// triggers keep on every write to memories: after each kind of write the
// counts must equal a recount of the entries.
for (const backend of backends()) {
  describe.skipIf(!backend.available)(`memory word counts follow every write [${backend.name}]`, () => {
    let opened: OpenDatabase;
    let store: MemoryStore;
    beforeAll(async () => {
      opened = await backend.open();
      store = new MemoryStore(opened.db);
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("counts entries and words as they are added, replaced, skipped and deleted", async () => {
      await store.put(U1, [entry("a", "red apple pie"), entry("b", "green apple")]);
      await store.put(U2, [entry("a", "red car")]);
      await store.put(U1, [
        entry("e1", "apple tart", { sessionId: "s1", eventId: "e1" }),
        entry("e2", "blue sky", { sessionId: "s1", eventId: "e2" }),
      ]);
      let c = await counts(opened);
      expect(c.kept).toEqual(c.recounted);
      expect(await count(opened, U1, "")).toBe(4);
      expect(await count(opened, U1, "apple")).toBe(3);
      expect(await count(opened, U2, "apple")).toBeUndefined();

      // An explicit entry put again replaces its words; an event ingested again is skipped.
      await store.put(U1, [entry("a", "yellow banana"), entry("e1", "apple tart", { sessionId: "s1", eventId: "e1" })]);
      c = await counts(opened);
      expect(c.kept).toEqual(c.recounted);
      expect(await count(opened, U1, "")).toBe(4);
      expect(await count(opened, U1, "apple")).toBe(2);
      expect(await count(opened, U1, "red")).toBeUndefined();
      expect(await count(opened, U1, "banana")).toBe(1);

      expect(await store.delete(U1, "b")).toBe(true);
      expect(await store.deleteBySession(U1, "s1")).toBe(2);
      c = await counts(opened);
      expect(c.kept).toEqual(c.recounted);
      expect(await count(opened, U1, "")).toBe(1);
      expect(await count(opened, U1, "apple")).toBeUndefined();

      // Expired entries swept by the retention sweeper.
      await store.put(U2, [entry("old", "red wine", { expireTimeNs: nowNs() - 1n })]);
      expect(await count(opened, U2, "red")).toBe(2);
      expect(await store.sweepExpired(undefined, undefined, 100)).toBe(1);
      c = await counts(opened);
      expect(c.kept).toEqual(c.recounted);
      expect(await count(opened, U2, "red")).toBe(1);

      expect(await store.eraseUser(U2)).toBe(1);
      c = await counts(opened);
      expect(c.kept).toEqual(c.recounted);
      expect(c.kept.filter((r) => r.user_id === "u2")).toEqual([]);
    });

    it("weighs a question's words by the counts", async () => {
      await store.put(U1, [entry("w1", "my cat is black"), entry("w2", "my dog is brown")]);
      const { entries, lexemes, terms } = await weighTerms(opened.db, U1, "simple", "what is my cat called");
      expect(entries).toBe(3);
      expect(lexemes).toBe(5);
      // "what" and "called" are in no entry; "is" and "my" in two of three, "cat" in one.
      expect(terms.map((t) => t.lexeme)).toEqual(["cat", "is", "my"]);
      const [cat, is] = terms;
      expect(cat?.idf).toBeGreaterThan(is?.idf ?? Number.POSITIVE_INFINITY);
      expect(terms.every((t) => t.selective)).toBe(true);
    });
  });
}
