// `npx tsx bench/memory.ts [--smoke]`: MemoryService on PostgreSQL.
//
// - SearchMemory p50 / p95 at 10k, 100k and 1M entries over 1,000 users
//   (loaded in bulk with SQL: the same rows the service writes), with
//   questions that mix one telling word with common ones;
// - the ingestion rate of AddSessionToMemory (sessions of 20 events);
// - recall@5 and MRR of text search on the test suite's recall set.
//
// It runs the real server as a child process on a fresh database and drops
// it afterwards. Writes bench/results/memory-<mode>.json and prints a
// Markdown table for BENCHMARKS.md. `--smoke` uses tiny sizes: it checks the
// harness, the numbers mean nothing. Measure on a quiet machine.

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ContentSchema } from "../gen/ts/sessionstore/v1/event_pb.js";
import { MemoryService } from "../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../gen/ts/sessionstore/v1/session_service_pb.js";
import { ACKNOWLEDGEMENT, recallSet } from "../test/memory/recall-set.js";
import { BenchDatabases, DEFAULT_ADMIN_URL, ensurePostgres, withClient } from "./postgres.js";
import { startServer } from "./server.js";
import { percentile, round } from "./stats.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const smoke = process.argv.includes("--smoke");
const USERS = smoke ? 20 : 1000;
const SIZES = smoke ? [2_000] : [10_000, 100_000, 1_000_000];
const SEARCHES = smoke ? 20 : 500;
const INGEST_SESSIONS = smoke ? 5 : 200;

const log = (msg: string) => process.stderr.write(`[memory bench] ${msg}\n`);

// A vocabulary for generated entries: a few very common words and many rare ones.
// clients/python/bench/memory_adk_bench.py mirrors this generator (vocabulary,
// entry texts, users, ids, timestamps, questions) for ADK's memory services:
// change both together. The products are bigint: g * 104729 leaves int4 at
// g = 20,506.
const COMMON = ["i", "my", "the", "is", "a", "to", "and", "of", "it", "that"];
const RARE = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);

/** Adds entries up to `total`, for users u0..u(USERS-1), in one statement per 50k rows. */
async function load(url: string, from: number, total: number): Promise<void> {
  for (let start = from; start < total; start += 50_000) {
    const end = Math.min(total, start + 50_000);
    await withClient(url, (c) =>
      c.query(
        `INSERT INTO memories (app_name, user_id, id, timestamp_ns, create_time_ns, content, body, search)
         SELECT 'bench', 'u' || (g % $1), 'm' || g, g::bigint * 1000000000, g::bigint * 1000000000,
           '\\x12'::bytea || set_byte('\\x00'::bytea, 0, octet_length(b) + 2) || '\\x0a'::bytea
             || set_byte('\\x00'::bytea, 0, octet_length(b)) || convert_to(b, 'UTF8'),
           b, to_tsvector('simple', b)
         FROM generate_series($2::int, $3::int) g,
           LATERAL (SELECT $4::text[] AS common, $5::text[] AS rare) v,
           LATERAL (SELECT concat_ws(' ', common[1 + g % 10], common[1 + (g / 7) % 10], rare[1 + (g::bigint * 7919) % 5000],
             common[1 + (g / 3) % 10], rare[1 + (g::bigint * 104729) % 5000], 'fact', g::text) AS b) t`,
        [USERS, start, end - 1, COMMON, RARE],
      ),
    );
  }
  await withClient(url, (c) => c.query("ANALYZE memories"));
}

async function main(): Promise<void> {
  const adminUrl = process.env.SESSIONSTORE_BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  await ensurePostgres(adminUrl, root, log);
  const dbs = new BenchDatabases(adminUrl);
  const url = await dbs.create("memory", { migrate: true });
  const server = await startServer({ root, databaseUrl: url });
  const transport = createGrpcTransport({ baseUrl: server.url });
  const memory = createClient(MemoryService, transport);
  const sessions = createClient(SessionService, transport);
  const results: Record<string, unknown> = { date: new Date().toISOString(), mode: smoke ? "smoke" : "full", users: USERS };
  try {
    const search: Record<string, unknown>[] = [];
    let loaded = 0;
    for (const size of SIZES) {
      await load(url, loaded, size);
      loaded = size;
      const latencies: number[] = [];
      let found = 0;
      for (let i = 0; i < SEARCHES; i++) {
        const user = `u${(i * 37) % USERS}`;
        const query = `what is ${RARE[(i * 7919) % RARE.length]} to my ${RARE[(i * 13) % RARE.length]}`;
        const t0 = performance.now();
        const res = await memory.searchMemory({ appName: "bench", userId: user, query, pageSize: 5 });
        latencies.push(performance.now() - t0);
        found += res.results.length;
      }
      latencies.sort((a, b) => a - b);
      search.push({ entries: size, p50Ms: round(percentile(latencies, 50)), p95Ms: round(percentile(latencies, 95)), found });
      log(`${size} entries: p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms`);
    }
    results.search = search;

    // Ingestion: sessions of 20 events, each session ingested once.
    const ids: string[] = [];
    for (let s = 0; s < INGEST_SESSIONS; s++) {
      const { session } = await sessions.createSession({ appName: "ingest", userId: `u${s % USERS}` });
      const sessionId = session?.id ?? "";
      for (let e = 0; e < 20; e++) {
        await sessions.appendEvent({
          appName: "ingest",
          userId: `u${s % USERS}`,
          sessionId,
          event: {
            author: e % 2 ? "agent" : "user",
            content: create(ContentSchema, {
              parts: [{ data: { case: "text", value: `turn ${e} of session ${s}: ${RARE[(s * 31 + e) % RARE.length]}` } }],
            }),
          },
        });
      }
      ids.push(sessionId);
    }
    const t0 = performance.now();
    for (const [s, sessionId] of ids.entries()) await memory.addSessionToMemory({ appName: "ingest", userId: `u${s % USERS}`, sessionId });
    const seconds = (performance.now() - t0) / 1000;
    results.ingestion = { sessions: ids.length, eventsPerSecond: round((ids.length * 20) / seconds, 1) };

    // Recall on the test suite's set.
    const set = recallSet();
    for (const user of set.users) {
      for (const told of user.sessions) {
        const { session } = await sessions.createSession({ appName: "recall", userId: user.userId });
        for (const fact of told) {
          for (const [author, text] of [
            ["user", fact.text],
            ["assistant", ACKNOWLEDGEMENT],
          ] as const) {
            await sessions.appendEvent({
              appName: "recall",
              userId: user.userId,
              sessionId: session?.id ?? "",
              event: { author, content: create(ContentSchema, { parts: [{ data: { case: "text", value: text } }] }) },
            });
          }
        }
        await memory.addSessionToMemory({ appName: "recall", userId: user.userId, sessionId: session?.id ?? "" });
      }
    }
    let hits = 0;
    let rr = 0;
    for (const q of set.questions) {
      const { results: found } = await memory.searchMemory({ appName: "recall", userId: q.userId, query: q.text, pageSize: 5 });
      const rank = found.findIndex((r) => r.memory?.content?.parts.some((p) => p.data.case === "text" && p.data.value.includes(q.answer)));
      if (rank >= 0) {
        hits++;
        rr += 1 / (rank + 1);
      }
    }
    results.recall = { questions: set.questions.length, recallAt5: hits / set.questions.length, mrr: round(rr / set.questions.length) };
    // What the smoke run checks besides "it ran": searches find entries, ingestion made them, recall holds.
    if (search.some((r) => r.found === 0)) throw new Error("a search size found nothing: the load or the search is broken");
    if (hits / set.questions.length < 0.9) throw new Error(`recall@5 ${hits / set.questions.length} is under 0.9`);
    const ingested = await memory.listMemories({ appName: "ingest", userId: "u0", pageSize: 1 });
    if (ingested.memories.length === 0) throw new Error("AddSessionToMemory made no entries");

    const dir = join(root, "bench", "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `memory-${smoke ? "smoke" : "full"}.json`), `${JSON.stringify(results, null, 2)}\n`);
    const rows = (results.search as { entries: number; p50Ms: number; p95Ms: number }[])
      .map((r) => `| SearchMemory, ${r.entries.toLocaleString("en")} entries, ${USERS} users | ${r.p50Ms} | ${r.p95Ms} |`)
      .join("\n");
    process.stdout.write(
      `| workload | p50 ms | p95 ms |\n| --- | --- | --- |\n${rows}\n\n${JSON.stringify({ ingestion: results.ingestion, recall: results.recall })}\n`,
    );
  } finally {
    await server.stop();
    await dbs.dropAll();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
