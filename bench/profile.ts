// `npm run bench -- --profile`: the append path, the read paths and tail fan-out, each in
// a server of its own under `node --cpu-prof`, with every query the server
// sends counted (bench/count-queries.ts). Writes the .cpuprofile files (open
// them in Chrome DevTools or speedscope), the query counts, and a summary
// in bench/results/profile-*.md.

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendRunGo, buildGoLoad } from "./go-load.js";
import { profilePlan } from "./plan.js";
import { BenchDatabases, DEFAULT_ADMIN_URL, ensurePostgres, withClient } from "./postgres.js";
import { startServer } from "./server.js";
import { listRun, loadHistory, loadSessions, tailRun, windowRun } from "./sessionstore.js";
import { round } from "./stats.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  startTime: number;
  endTime: number;
}

function busySamples(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  return profile.samples.filter((id) => !idle.has(id)).length;
}

/** Where time went: by area of the code, and the heaviest functions by self time. */
export function summarizeProfile(profile: CpuProfile, root: string): string {
  const total = profile.samples.length;
  const msPerSample = (profile.endTime - profile.startTime) / 1000 / Math.max(1, total);
  const area = (url: string, name: string) => {
    if (name === "(idle)" || name === "(program)" || name === "(garbage collector)") return name;
    if (!url) return "(native / V8 builtins)";
    if (url.startsWith("node:")) return `node: ${url.slice(5).split("/")[0]}`;
    const path = url.replace(`file://${root}/`, "");
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (m) return m[1] as string;
    return path.split("/").slice(0, 2).join("/");
  };
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const a = area(url, functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + hits);
    const where = url ? `${url.replace(`file://${root}/`, "").replace(/^.*node_modules\//, "")}:${lineNumber + 1}` : "";
    const key = `${functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
  }
  const busy = total - (byArea.get("(idle)") ?? 0);
  const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)}%`;
  const lines: string[] = [];
  lines.push(`${total} samples, ${round((total * msPerSample) / 1000, 1)} s, busy (not idle) ${pct(busy, total)}`);
  lines.push("");
  lines.push("| area | share of busy time |");
  lines.push("| --- | --- |");
  for (const [a, n] of [...byArea]
    .filter(([a]) => a !== "(idle)")
    .sort((x, y) => y[1] - x[1])
    .slice(0, 16)) {
    lines.push(`| ${a} | ${pct(n, busy)} |`);
  }
  lines.push("");
  lines.push("| function (self time) | share of busy time |");
  lines.push("| --- | --- |");
  for (const [f, n] of [...byFunction]
    .filter(([f]) => !f.startsWith("(idle)"))
    .sort((x, y) => y[1] - x[1])
    .slice(0, 25)) {
    lines.push(`| \`${f.replace(/\|/g, "\\|")}\` | ${pct(n, busy)} |`);
  }
  return lines.join("\n");
}

function queryTable(counts: Record<string, number>, per: number, unit: string): string {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, n]) => s + n, 0);
  const lines = [
    `${total} queries, ${round(total / per, 2)} per ${unit}`,
    "",
    `| statement | count | per ${unit} |`,
    "| --- | --- | --- |",
  ];
  for (const [text, n] of rows.slice(0, 20)) lines.push(`| \`${text.replace(/\|/g, "\\|")}\` | ${n} | ${round(n / per, 2)} |`);
  return lines.join("\n");
}

export async function runProfile(root: string, log: (msg: string) => void): Promise<void> {
  const plan = profilePlan;
  const adminUrl = process.env.SESSIONSTORE_BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  await ensurePostgres(adminUrl, root, log);
  const dbs = new BenchDatabases(adminUrl);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = join(root, "bench", "results", `profile-${stamp}`);
  mkdirSync(dir, { recursive: true });
  const sections: string[] = [`# Profile ${stamp}`, ""];
  try {
    const databaseUrl = await dbs.create("profile", { migrate: false });
    const phase = async (name: string, body: (url: string, pid: number) => Promise<{ per: number; unit: string; note: string }>) => {
      const profDir = join(dir, name);
      const queryLog = join(dir, `${name}-queries.json`);
      const server = await startServer({
        root,
        databaseUrl,
        nodeFlags: ["--cpu-prof", "--cpu-prof-dir", profDir, "--import", "./bench/count-queries.ts"],
        env: { SESSIONSTORE_POOL_SIZE: String(plan.poolSize), SESSIONSTORE_BENCH_QUERY_LOG: queryLog },
      });
      let result: { per: number; unit: string; note: string };
      try {
        result = await body(server.url, server.pid);
      } finally {
        await server.stop();
      }
      // One file per thread (tsx runs its module loader in a worker): the main thread is the busiest.
      const profiles = readdirSync(profDir)
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => ({ file: f, profile: JSON.parse(readFileSync(join(profDir, f), "utf8")) as CpuProfile }))
        .sort((a, b) => busySamples(b.profile) - busySamples(a.profile));
      const main = profiles[0];
      if (!main) throw new Error(`no .cpuprofile in ${profDir}`);
      const { file, profile } = main;
      const counts = JSON.parse(readFileSync(queryLog, "utf8")) as Record<string, number>;
      sections.push(`## ${name}`, "", result.note, "", `Profile: \`${join(profDir, file).replace(`${root}/`, "")}\``, "");
      sections.push(summarizeProfile(profile, root), "", "Queries the server sent (whole server lifetime, incl. start-up):", "");
      sections.push(queryTable(counts, result.per, result.unit), "");
      log(`profiled ${name}`);
    };

    await phase("append", async (url, pid) => {
      const run = await appendRunGo(buildGoLoad(root), {
        url,
        serverPid: pid,
        tag: "profile",
        writers: 64,
        hot: false,
        warmupSeconds: plan.appendWarmupSeconds,
        seconds: plan.appendSeconds,
      });
      // The warm-up's appends are in the query counts too: count them from the table.
      return {
        per: await countEvents(databaseUrl),
        unit: "append",
        note: `64 writers on distinct sessions (the Go load generator), ${run.throughput} appends/s, p50 ${run.latency.p50Ms} ms, p99 ${run.latency.p99Ms} ms, server CPU ${run.cpuSecondsPer10k} s per 10k appends.`,
      };
    });

    await phase("read", async (url) => {
      const history = await loadHistory(url, databaseUrl, 100_000);
      const window = await windowRun(url, history, plan.windowWarmup, plan.windowIterations);
      await loadSessions(databaseUrl, plan.listCount);
      const list = await listRun(url, plan.listCount, plan.listWarmup, plan.listIterations);
      const calls = plan.windowWarmup + plan.windowIterations + list.walkCalls + 2 * (plan.listWarmup + plan.listIterations);
      return {
        per: calls,
        unit: "read call",
        note: `${plan.windowIterations} GetSession (20 most recent of 100,000 events): p50 ${window.p50Ms} ms, p99 ${window.p99Ms} ms; ListSessions first page p50 ${list.first.p50Ms} ms, deep page p50 ${list.deep.p50Ms} ms (${calls} read calls in all).`,
      };
    });
    for (const t of plan.tails) {
      await phase("tails", async (url, pid) => {
        const run = await tailRun(url, pid, "profile", t.tails, t.sessions, t.rate, t.seconds);
        return {
          per: run.deliveries,
          unit: "delivery",
          note: `${run.tails} StreamEvents tails on ${run.sessions} session(s), ${run.appends} appends at ${t.rate}/s: ${run.deliveries} of ${run.expected} deliveries, p50 ${run.latency.p50Ms} ms, p99 ${run.latency.p99Ms} ms after the append's response.`,
        };
      });
    }
    const summary = join(root, "bench", "results", `profile-${stamp}.md`);
    writeFileSync(summary, `${sections.join("\n")}\n`);
    log(`wrote ${summary}`);
    process.stdout.write(`${sections.join("\n")}\n`);
  } finally {
    await dbs.dropAll();
  }
}

async function countEvents(databaseUrl: string): Promise<number> {
  return withClient(databaseUrl, async (db) => {
    const { rows } = await db.query<{ n: bigint }>("SELECT count(*)::int8 AS n FROM events");
    return Number(rows[0]?.n ?? 0);
  });
}
