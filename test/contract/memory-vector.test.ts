import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { type Content, ContentSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { snapshot } from "../support/db-snapshot.js";
import { unique } from "../support/ids.js";

const text = (value: string): Content => create(ContentSchema, { parts: [{ data: { case: "text", value } }] });

// Embeddings are the client's; these are small hand-made ones whose
// nearest neighbours are known.
const FACTS = [
  { id: "cat", words: "Our cat sleeps on the sofa", embedding: [1, 0, 0, 0] },
  { id: "car", words: "The car needs new tyres", embedding: [0, 1, 0, 0] },
  { id: "tea", words: "I drink green tea every morning", embedding: [0, 0, 1, 0] },
  { id: "kitten", words: "We adopted a kitten in May", embedding: [0.9, 0.1, 0, 0] },
];

describeContract("MemoryService vector search", (server, backend) => {
  const memory = () => server().clientFor(MemoryService);

  it.runIf(backend.name === "pglite")("has vector support on the embedded store (pgvector ships with it)", async () => {
    expect(await server().server.memories.vectorSupport()).toBe(true);
  });

  it("finds entries by embedding alone, nearest first, among entries of the same dimensions", async (ctx) => {
    if (!(await server().server.memories.vectorSupport())) ctx.skip("no pgvector in this database");
    const user = unique("u");
    await memory().addMemories({
      appName: "app",
      userId: user,
      memories: [
        ...FACTS.map((f) => ({ id: f.id, content: text(f.words), embedding: f.embedding })),
        { id: "other-dims", content: text("three dimensions"), embedding: [1, 0, 0] },
        { id: "no-embedding", content: text("plain text about cats") },
      ],
    });
    await memory().addMemories({ appName: "app", userId: unique("other"), memories: [{ content: text("cat"), embedding: [1, 0, 0, 0] }] });
    const res = await memory().searchMemory({ appName: "app", userId: user, queryEmbedding: [1, 0.05, 0, 0], pageSize: 2 });
    expect(res.results.map((r) => r.memory?.id)).toEqual(["cat", "kitten"]);
    expect(res.results[0]?.vectorDistance).toBeCloseTo(1 - 1 / Math.sqrt(1 + 0.05 ** 2), 5);
    expect(res.results[0]?.textScore).toBeUndefined();
    expect(res.results[0]?.highlight).toBe("");
    expect(res.results[0]?.memory?.hasEmbedding).toBe(true);
    expect(res.results[0]?.memory?.embedding).toEqual([]);
  });

  it("fuses text and vector rankings: an entry strong in both ranks first", async (ctx) => {
    if (!(await server().server.memories.vectorSupport())) ctx.skip("no pgvector in this database");
    const user = unique("u");
    await memory().addMemories({
      appName: "app",
      userId: user,
      memories: FACTS.map((f) => ({ id: f.id, content: text(f.words), embedding: f.embedding })),
    });
    // Text alone prefers "tea" (the only entry with "morning"); the
    // embedding points at the cats. "kitten" matches both.
    const textOnly = await memory().searchMemory({ appName: "app", userId: user, query: "kitten morning" });
    expect(textOnly.results.map((r) => r.memory?.id).sort()).toEqual(["kitten", "tea"]);
    const hybrid = await memory().searchMemory({ appName: "app", userId: user, query: "kitten morning", queryEmbedding: [1, 0, 0, 0] });
    expect(hybrid.results[0]?.memory?.id).toBe("kitten");
    expect(hybrid.results[0]?.textScore).toBeGreaterThan(0);
    expect(hybrid.results[0]?.vectorDistance).toBeDefined();
    expect(hybrid.results[0]?.highlight).toContain("<b>kitten</b>");
    expect(hybrid.results.map((r) => r.memory?.id)).toContain("cat");
  });

  it("refuses embeddings with FAILED_PRECONDITION where the store has no vector support, writing nothing", async (ctx) => {
    if (await server().server.memories.vectorSupport()) ctx.skip("this database has pgvector");
    const user = unique("u");
    const before = await snapshot(server().database);
    await expectCode(
      memory().addMemories({ appName: "app", userId: user, memories: [{ content: text("x"), embedding: [1, 2] }] }),
      Code.FailedPrecondition,
      /pgvector/,
    );
    expect(await snapshot(server().database)).toBe(before);
    await expectCode(memory().searchMemory({ appName: "app", userId: user, query: "x", queryEmbedding: [1, 2] }), Code.FailedPrecondition);
    // Text search is unaffected.
    await memory().addMemories({ appName: "app", userId: user, memories: [{ content: text("x marks the spot") }] });
    expect((await memory().searchMemory({ appName: "app", userId: user, query: "spot" })).results).toHaveLength(1);
  });
});
