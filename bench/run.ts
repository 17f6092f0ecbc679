// `npm run bench`: every workload, several times, this project next to ADK's
// DatabaseSessionService and the bare-SQL ceiling, on one PostgreSQL.
//
//   npm run bench                  the full run: bench/results/full-*.json and BENCHMARKS.md
//   npm run bench -- --smoke       tiny sizes, one repetition, no ADK: checks the harness works
//   npm run bench -- --profile     the append, read and tail paths under node --cpu-prof (bench/profile.ts)
//   npm run bench -- --report F    BENCHMARKS.md again from the results file F, without measuring
//
// Options (npm run bench -- --help): --reps N, --seconds S (measured seconds per append run), --no-adk,
// --adk (the ADK peer in a smoke run too), --only append,window,list,tails,turn,scale
// (a subset, for development; the report then says "not run" for the rest). SESSIONSTORE_BENCH_DATABASE_URL
// points at another PostgreSQL (default: the role scripts/postgres-up.sh makes).

import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { optionalInteger, parseOptions, renderHelp, text, toggle, UsageError, type Values } from "../src/cli/options.js";
import { AdkPeer, ensureVenv } from "./adk.js";
import { nodePgCeiling, pgbenchCeiling } from "./ceiling.js";
import { appendRunGo, buildGoLoad, readRunGo } from "./go-load.js";
import { fullPlan, type Plan, smokePlan, WORKLOADS, type Workload } from "./plan.js";
import { BenchDatabases, DEFAULT_ADMIN_URL, ensurePostgres, findPgbench, serverInfo } from "./postgres.js";
import { runProfile } from "./profile.js";
import { renderMarkdown } from "./report.js";
import type { RepResult, Results } from "./results.js";
import { runScale, scaleFaults } from "./scale-run.js";
import { type BenchServer, sampleProcess, startServer } from "./server.js";
import {
  appendRun,
  catchUpRun,
  type LoadedHistory,
  listRun,
  loadHistory,
  loadSessions,
  sampleBody,
  tailRun,
  windowRun,
} from "./sessionstore.js";
import { round } from "./stats.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();

function log(msg: string): void {
  const t = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${t}s] ${msg}\n`);
}

// One definition per option: node:util parseArgs reads it, and `--help` prints it.
const benchOptions = {
  smoke: toggle("smoke", "tiny sizes, one repetition, no ADK: checks the harness works"),
  profile: toggle("profile", "the append, read and tail paths under node --cpu-prof (bench/profile.ts)"),
  report: text("report", "BENCHMARKS.md again from this results file, without measuring", { valueName: "FILE" }),
  reps: optionalInteger("reps", 1, 1000, "repetitions of every workload"),
  seconds: text("seconds", "measured seconds per append run (at least 0.1)", { valueName: "S" }),
  noAdk: toggle("no-adk", "leave out the ADK peer"),
  adk: toggle("adk", "the ADK peer in a smoke run too"),
  only: text("only", `a subset of the workloads (${WORKLOADS.join(",")}); the report says "not run" for the rest`, { valueName: "LIST" }),
};

function parsePlan(values: Values<typeof benchOptions>): Plan {
  const plan: Plan = structuredClone(values.smoke ? smokePlan : fullPlan);
  if (values.reps !== undefined) plan.reps = values.reps;
  if (values.seconds !== undefined) {
    const seconds = Number(values.seconds);
    if (!Number.isFinite(seconds)) throw new UsageError(`--seconds must be a number, got "${values.seconds}"`);
    plan.appendSeconds = Math.max(0.1, seconds);
  }
  if (values.noAdk) plan.adk = false;
  if (values.adk) plan.adk = true;
  if (values.only) {
    const picked = values.only.split(",").map((w) => w.trim());
    for (const w of picked) if (!(WORKLOADS as readonly string[]).includes(w)) throw new UsageError(`--only: unknown workload ${w}`);
    plan.only = picked as Workload[];
  }
  return plan;
}

function machine(): Record<string, unknown> {
  const cpuinfo = (() => {
    try {
      return readFileSync("/proc/cpuinfo", "utf8");
    } catch {
      return "";
    }
  })();
  const git = (args: string[]) => {
    try {
      return execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  };
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    loadAverageAtStart: os.loadavg().map((l) => round(l, 2)),
    commit: git(["rev-parse", "--short", "HEAD"]),
    dirty: git(["status", "--porcelain", "--", "src", "bench", "package.json"]) !== "",
  };
}

async function main(): Promise<void> {
  const { values, help } = parseOptions(benchOptions, process.argv.slice(2));
  if (help) {
    process.stdout.write(renderHelp("usage: npm run bench -- [options]", "Benchmarks; see the header of bench/run.ts.", benchOptions));
    return;
  }
  if (values.profile) {
    await runProfile(root, log);
    return;
  }
  if (values.report !== undefined) {
    // Renders the Markdown again from a results file (after editing bench/report.ts or bench/PROFILE.md).
    const file = values.report;
    const results = JSON.parse(readFileSync(file, "utf8")) as Results;
    const complete = results.plan.mode === "full" && results.plan.only.length === WORKLOADS.length;
    const out = complete ? join(root, "BENCHMARKS.md") : join(root, "bench", "results", `${results.plan.mode}-partial.md`);
    writeFileSync(out, renderMarkdown(results));
    log(`wrote ${out}`);
    return;
  }
  const plan = parsePlan(values);
  const adminUrl = process.env.SESSIONSTORE_BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  log(`${plan.mode} run: ${plan.reps} repetition(s), ADK ${plan.adk ? "on" : "off"}`);
  const [load1] = os.loadavg();
  if ((load1 ?? 0) > os.cpus().length * 0.5) {
    log(`the machine is busy (load average ${load1?.toFixed(1)} on ${os.cpus().length} cores): expect noisy numbers`);
  }
  await ensurePostgres(adminUrl, root, log);

  const dbs = new BenchDatabases(adminUrl);
  let server: BenchServer | undefined;
  let peer: AdkPeer | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () => {
    cleaning ??= (async () => {
      await peer?.close().catch(() => {});
      await server?.stop().catch(() => {});
      await dbs.dropAll().catch((err: unknown) => log(`could not drop the bench databases: ${String(err)}`));
    })();
    return cleaning;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping and dropping the bench databases`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const meta: Record<string, unknown> = { date: new Date().toISOString(), mode: plan.mode, ...machine() };
    meta.postgres = await serverInfo(adminUrl);
    const storeUrl = await dbs.create("store", { migrate: false });
    const ceilingUrl = plan.nodePg || plan.pgbench ? await dbs.create("ceiling", { migrate: true }) : undefined;
    const pgbench = plan.pgbench ? findPgbench() : undefined;
    if (plan.pgbench && !pgbench) log("pgbench not found: the pgbench ceiling is skipped");
    meta.pgbench = pgbench ?? null;

    server = await startServer({ root, databaseUrl: storeUrl, env: { SESSIONSTORE_POOL_SIZE: String(plan.poolSize) } });
    const idle = sampleProcess(server.pid);
    log(`server pid ${server.pid} at ${server.url}, ${idle.rssMiB.toFixed(0)} MiB resident`);

    if (plan.adk) {
      const python = ensureVenv(root, log);
      const adkUrl = await dbs.create("adk", { migrate: false });
      peer = new AdkPeer(python, root, adkUrl, plan.poolSize);
      const versions = await peer.versions;
      meta.adk = versions.adk;
      meta.python = versions.python;
      await peer.init();
      log(`ADK peer: google-adk ${versions.adk} on Python ${versions.python}`);
    }

    const runs = (w: Workload) => plan.only.includes(w);
    const loads: Record<string, number> = {};
    const histories: LoadedHistory[] = [];
    // The longest history also serves the catch-up read of the tails workload.
    const historySizes = runs("window") ? plan.historySizes : runs("tails") ? [Math.max(...plan.historySizes)] : [];
    for (const size of historySizes) {
      const h = await loadHistory(server.url, storeUrl, size);
      histories.push(h);
      loads[`sessionstore history ${size}`] = h.loadSeconds;
      log(`loaded a ${size}-event session in ${h.loadSeconds} s`);
    }
    const adkHistories: { sessionId: string; size: number }[] = [];
    if (peer && runs("window")) {
      for (const size of plan.historySizes) {
        const h = await peer.loadHistory(size);
        adkHistories.push({ ...h, size });
        loads[`adk history ${size}`] = h.loadSeconds;
        log(`loaded a ${size}-event ADK session in ${h.loadSeconds} s`);
      }
    }
    if (runs("list")) {
      loads["sessionstore sessions"] = await loadSessions(storeUrl, plan.listCount);
      if (peer) loads["adk sessions"] = await peer.loadSessions(plan.listCount);
      log(`loaded ${plan.listCount} sessions for ListSessions`);
    }

    const body = sampleBody();
    const goLoad = buildGoLoad(root);
    const reps: RepResult[] = [];
    let afterAppendsRssMiB: number | undefined;
    let deepPage: Results["deepPage"];
    for (let rep = 1; rep <= plan.reps; rep++) {
      const r: RepResult = { rep, append: [], window: [], listEvents: [], list: [], tails: [], catchUp: [] };
      reps.push(r);
      const configs = runs("append") ? plan.appendWriters.map((writers) => ({ writers, hot: false })) : [];
      if (runs("append") && plan.hotWriters > 0) configs.push({ writers: plan.hotWriters, hot: true });
      for (const { writers, hot } of configs) {
        const tag = `r${rep}-${hot ? "hot" : "w"}${writers}`;
        const label = `${writers} writer(s)${hot ? " on one session" : ""}`;
        const w = plan.appendWarmupSeconds;
        const s = plan.appendSeconds;
        const load = { url: server.url, serverPid: server.pid, writers, hot, warmupSeconds: w, seconds: s };
        const ours = await appendRunGo(goLoad, { ...load, tag: `${tag}-go` });
        r.append.push({ system: "sessionstore", run: ours });
        log(`rep ${rep} append ${label}: sessionstore ${ours.throughput}/s p99 ${ours.latency.p99Ms} ms`);
        const viaTs = await appendRun({ ...load, tag: `${tag}-ts` });
        r.append.push({ system: "sessionstore-ts", run: viaTs });
        log(`rep ${rep} append ${label}: sessionstore (TypeScript client) ${viaTs.throughput}/s`);
        if (ceilingUrl && plan.nodePg) {
          const c = await nodePgCeiling(ceilingUrl, `${tag}-n`, writers, hot, body, w, s);
          r.append.push({ system: "ceiling-node-pg", run: c });
          log(`rep ${rep} append ${label}: ceiling (node-postgres) ${c.throughput}/s`);
        }
        if (ceilingUrl && pgbench) {
          const c = await pgbenchCeiling(pgbench, ceilingUrl, `${tag}-p`, writers, hot, body, w, s);
          r.append.push({ system: "ceiling-pgbench", run: c });
          log(`rep ${rep} append ${label}: ceiling (pgbench) ${c.throughput}/s`);
        }
        if (peer) {
          const a = await peer.append(tag, writers, hot, w, s);
          r.append.push({ system: "adk", run: a });
          log(`rep ${rep} append ${label}: ADK ${a.throughput}/s`);
        }
      }
      if (runs("append")) afterAppendsRssMiB = round(sampleProcess(server.pid).rssMiB, 1);

      for (const h of runs("window") ? histories : []) {
        // The Go client, as for appends; the TypeScript client's figure is its own column.
        const latency = await readRunGo(goLoad, server.url, h, "window", plan.windowWarmup, plan.windowIterations);
        r.window.push({ system: "sessionstore", size: h.size, latency });
        const viaTs = await windowRun(server.url, h, plan.windowWarmup, plan.windowIterations);
        r.window.push({ system: "sessionstore-ts", size: h.size, latency: viaTs });
        const newest = await readRunGo(goLoad, server.url, h, "newest", plan.windowWarmup, plan.windowIterations);
        r.listEvents?.push({ size: h.size, latency: newest });
      }
      if (peer && runs("window")) {
        for (const h of adkHistories) {
          const latency = await peer.window(h.sessionId, h.size, plan.windowWarmup, plan.adkWindowIterations);
          r.window.push({ system: "adk", size: h.size, latency });
        }
      }
      if (runs("window")) {
        log(`rep ${rep} windowed reads: ${r.window.map((w) => `${w.system} ${w.size}: ${w.latency.p50Ms} ms`).join(", ")}`);
        log(`rep ${rep} ListEvents, 20 newest: ${(r.listEvents ?? []).map((e) => `${e.size}: ${e.latency.p50Ms} ms`).join(", ")}`);
      }

      if (runs("list")) {
        const listed = await listRun(server.url, plan.listCount, plan.listWarmup, plan.listIterations);
        deepPage = { offset: listed.deepOffset, walkCalls: listed.walkCalls };
        r.list.push({ system: "sessionstore", page: "first", latency: listed.first });
        r.list.push({ system: "sessionstore", page: "deep", latency: listed.deep });
        if (peer) r.list.push({ system: "adk", page: "all", latency: await peer.list(plan.listCount, 1, plan.adkListIterations) });
        log(`rep ${rep} list: ${r.list.map((l) => `${l.system} ${l.page}: ${l.latency.p50Ms} ms`).join(", ")}`);
      }

      if (!runs("tails")) continue;
      for (const [i, t] of plan.tails.entries()) {
        const run = await tailRun(server.url, server.pid, `r${rep}-${i}`, t.tails, t.sessions, t.rate, t.seconds);
        r.tails.push(run);
        log(
          `rep ${rep} tails ${t.tails} on ${t.sessions} session(s): ${run.deliveries}/${run.expected} delivered, p50 ${run.latency.p50Ms} ms p99 ${run.latency.p99Ms} ms`,
        );
      }
      const longest = histories.reduce((a, b) => (b.size > a.size ? b : a));
      const caught = await catchUpRun(server.url, longest);
      r.catchUp.push(caught);
      log(`rep ${rep} catch-up of ${longest.size} events: ${caught.eventsPerSecond} events/s`);
    }

    const scale = await runScale({ plan, root, dbs, server, storeUrl, peer, log });

    const final = sampleProcess(server.pid);
    meta.loadAverageAtEnd = os.loadavg().map((l) => round(l, 2));
    meta.durationSeconds = round((Date.now() - started) / 1000, 0);
    const results: Results = {
      meta,
      plan,
      loads,
      memory: {
        idleRssMiB: round(idle.rssMiB, 1),
        peakRssMiB: round(final.hwmMiB, 1),
        afterAppendsRssMiB,
        finalRssMiB: round(final.rssMiB, 1),
      },
      deepPage,
      reps,
      serverProblems: server.problems,
      scale,
    };
    const dir = join(root, "bench", "results");
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const jsonPath = join(dir, `${plan.mode}-${stamp}.json`);
    writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
    const markdown = renderMarkdown(results);
    // Only a complete full run replaces BENCHMARKS.md.
    const complete = plan.mode === "full" && plan.only.length === WORKLOADS.length;
    const mdPath = complete
      ? join(root, "BENCHMARKS.md")
      : join(dir, `${plan.mode}${plan.only.length === WORKLOADS.length ? "" : "-partial"}.md`);
    writeFileSync(mdPath, markdown);
    log(`wrote ${jsonPath} and ${mdPath}`);
    // What the smoke run checks besides "every workload ran and returned the right data".
    const faults = reps.flatMap((r) => [
      ...r.append
        .filter((a) => a.run.errors > 0)
        .map((a) => `${a.system} ${a.run.writers} writers: ${a.run.errors} errors (${a.run.firstError})`),
      ...r.append.filter((a) => a.run.ops === 0).map((a) => `${a.system} ${a.run.writers} writers: no append completed`),
      ...r.tails
        .filter((t) => t.deliveries !== t.expected)
        .map((t) => `tails ${t.tails}/${t.sessions}: ${t.deliveries} of ${t.expected} delivered`),
      ...scaleFaults(scale),
    ]);
    for (const fault of faults) log(`FAULT ${fault}`);
    if (faults.length > 0) process.exitCode = 1;
    if (server.problems.length > 0) log(`the server logged ${server.problems.length} warning(s); see serverProblems in the JSON`);
  } finally {
    await cleanup();
    log("stopped the server and peers, dropped the bench databases");
  }
}

// Clients keep HTTP/2 sessions open; everything that needed stopping has been stopped.
main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message} (npm run bench -- --help)\n`);
      process.exit(2);
    }
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
