import { describe, expect, it } from "vitest";
import { GroupCommit, type Outcome } from "../../src/storage/group-commit.js";

// The scheduler alone: which items go together, in what order, and how each
// caller learns its own outcome. (The batches' SQL is tested through the
// server in test/contract/append-batch.test.ts.)

interface Item {
  id: number;
  keys: string[];
}

function harness(options: { maxBatches: number; maxBatchSize: number }) {
  const batches: number[][] = [];
  const open: { release: () => void }[] = [];
  const commit = new GroupCommit<Item, number>(
    async (batch) => {
      batches.push(batch.map((i) => i.id));
      await new Promise<void>((release) => open.push({ release }));
      return batch.map(
        (i): Outcome<number> => (i.id < 0 ? { ok: false, error: new Error(`refused ${i.id}`) } : { ok: true, value: i.id * 10 }),
      );
    },
    { ...options, keys: (i) => i.keys },
  );
  const releaseAll = async () => {
    while (open.length > 0) {
      for (const o of open.splice(0)) o.release();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { commit, batches, open, releaseAll };
}

describe("group commit", () => {
  it("runs the first item at once and gathers what arrives meanwhile into the next batch", async () => {
    const h = harness({ maxBatches: 1, maxBatchSize: 100 });
    const results = [1, 2, 3, 4].map((id) => h.commit.submit({ id, keys: [`s${id}`] }));
    expect(h.batches).toEqual([[1]]);
    await h.releaseAll();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
    expect(h.batches).toEqual([[1], [2, 3, 4]]);
  });

  it("never puts two items with a common key in one batch, and keeps their order", async () => {
    const h = harness({ maxBatches: 1, maxBatchSize: 100 });
    const results = [
      { id: 1, keys: ["x"] },
      { id: 2, keys: ["s2", "user"] },
      { id: 3, keys: ["s3", "user"] },
      { id: 4, keys: ["s2"] },
      { id: 5, keys: ["s5"] },
    ].map((item) => h.commit.submit(item));
    await h.releaseAll();
    await Promise.all(results);
    expect(h.batches).toEqual([[1], [2, 5], [3, 4]]);
  });

  it("caps the batch size and the batches in flight", async () => {
    const h = harness({ maxBatches: 2, maxBatchSize: 2 });
    const results = [1, 2, 3, 4, 5, 6, 7].map((id) => h.commit.submit({ id, keys: [`s${id}`] }));
    expect(h.batches).toEqual([[1], [2]]);
    await h.releaseAll();
    await Promise.all(results);
    expect(h.batches).toEqual([[1], [2], [3, 4], [5, 6], [7]]);
  });

  it("gives each caller its own outcome, and every caller the error when a batch throws", async () => {
    const h = harness({ maxBatches: 1, maxBatchSize: 100 });
    const ok = h.commit.submit({ id: 1, keys: ["a"] });
    const refused = h.commit.submit({ id: -2, keys: ["b"] }).catch((e: unknown) => e);
    const fine = h.commit.submit({ id: 3, keys: ["c"] });
    await h.releaseAll();
    expect(await ok).toBe(10);
    expect(String(await refused)).toMatch("refused -2");
    expect(await fine).toBe(30);

    const broken = new GroupCommit<Item, number>(
      async () => {
        throw new Error("connection lost");
      },
      { maxBatches: 1, maxBatchSize: 10, keys: (i) => i.keys },
    );
    const all = [1, 2].map((id) => broken.submit({ id, keys: [`s${id}`] }).catch((e: unknown) => e));
    expect((await Promise.all(all)).map(String)).toEqual(["Error: connection lost", "Error: connection lost"]);
  });
});
