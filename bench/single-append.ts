// A focused append measurement for A/B comparisons on a busy machine:
//
//   npx tsx bench/single-append.ts [--writers 1] [--seconds 5] [--rounds 3] [--trace] [--ceiling]
//                                  [--root DIR ...]
//
// Each round starts one server per --root (default: this checkout; give two
// to compare commits, e.g. a `git worktree` of the baseline), each on a fresh
// database it migrates itself, and drives it with the Go load generator
// (clients/go/cmd/sessionstore-load, as the full bench does); the roots take
// turns within a round, so a change in the machine's load hits both alike.
// Reported per run: appends/s, p50/p99, the server's CPU per append and that
// of the PostgreSQL backends serving it (from /proc, less sensitive to the
// load than the latencies). --trace preloads bench/append-trace.ts, which
// splits the server's part of a single append into its steps (meaningful at
// one writer). --ceiling adds the node-postgres ceiling (bench/ceiling.ts)
// at the same concurrency in every round, --pgbench the pgbench one. --cpu-prof DIR profiles each server
// (summarize with bench/profile.ts's summarizeProfile).

import { readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { nodePgCeiling, pgbenchCeiling } from "./ceiling.js";
import { appendRunGo, buildGoLoad } from "./go-load.js";
import { BenchDatabases, DEFAULT_ADMIN_URL, findPgbench, withClient } from "./postgres.js";
import { sampleProcess, startServer } from "./server.js";
import { sampleBody } from "./sessionstore.js";
import { round } from "./stats.js";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function args(argv: string[]) {
  const value = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? (argv[at + 1] as string) : fallback;
  };
  const roots: string[] = [];
  argv.forEach((a, i) => {
    if (a === "--root") roots.push(resolve(argv[i + 1] as string));
  });
  return {
    writers: Number(value("--writers", "1")),
    seconds: Number(value("--seconds", "5")),
    warmup: Number(value("--warmup", "2")),
    rounds: Number(value("--rounds", "3")),
    trace: argv.includes("--trace"),
    ceiling: argv.includes("--ceiling"),
    pgbench: argv.includes("--pgbench"),
    cpuProf: argv.includes("--cpu-prof") ? value("--cpu-prof", "") : undefined,
    roots: roots.length > 0 ? roots : [here],
  };
}

/** CPU seconds of the database's backends (other than the asking one), from /proc. */
async function backendCpu(databaseUrl: string, name: string): Promise<number> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
      [name],
    );
    let sum = 0;
    for (const { pid } of rows) {
      try {
        sum += sampleProcess(pid).cpuSeconds;
      } catch {
        // Gone meanwhile.
      }
    }
    return sum;
  });
}

async function main(): Promise<void> {
  const opts = args(process.argv.slice(2));
  const binary = buildGoLoad(here);
  const dbs = new BenchDatabases(process.env.SESSIONSTORE_BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL);
  const lines: string[] = [];
  const print = (line: string) => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  print(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; writers ${opts.writers}, ${opts.seconds} s each`,
  );
  try {
    for (let round_ = 1; round_ <= opts.rounds; round_++) {
      for (const [i, root] of opts.roots.entries()) {
        const databaseUrl = await dbs.create(`r${round_}_${i}`, { migrate: false });
        const dbName = new URL(databaseUrl).pathname.slice(1);
        const traceFile = join(os.tmpdir(), `${dbName}-trace.json`);
        const server = await startServer({
          root,
          databaseUrl,
          nodeFlags: [
            ...(opts.trace ? ["--import", join(here, "bench", "append-trace.ts")] : []),
            ...(opts.cpuProf ? ["--cpu-prof", "--cpu-prof-dir", join(resolve(opts.cpuProf), `r${round_}-${i}`)] : []),
          ],
          env: { ...(opts.trace ? { SESSIONSTORE_BENCH_TRACE: traceFile } : {}) },
        });
        let line: string;
        try {
          // Sampled around the run: the backends exist once the warm-up has begun, so sample them then.
          let pgBefore = 0;
          const sampler = setTimeout(
            () => {
              void backendCpu(databaseUrl, dbName).then((v) => {
                pgBefore = v;
              });
            },
            Math.max(500, opts.warmup * 1000 - 200),
          );
          const run = await appendRunGo(binary, {
            url: server.url,
            serverPid: server.pid,
            tag: `r${round_}`,
            writers: opts.writers,
            hot: false,
            warmupSeconds: opts.warmup,
            seconds: opts.seconds,
          });
          clearTimeout(sampler);
          const pgAfter = await backendCpu(databaseUrl, dbName);
          // The warm-up's share of the backends' CPU is left out roughly: per append over the whole run.
          const pgMs = round(((pgAfter - pgBefore) / Math.max(1, run.ops)) * 1000, 3);
          line =
            `round ${round_} ${root}: ${run.throughput}/s p50 ${run.latency.p50Ms} ms p99 ${run.latency.p99Ms} ms, ` +
            `server CPU ${round((run.cpuSecondsPer10k ?? Number.NaN) / 10, 3)} ms/append, PostgreSQL backends ~${pgMs} ms/append, errors ${run.errors}`;
        } finally {
          await server.stop();
        }
        print(line);
        if (opts.trace) {
          try {
            print(readFileSync(traceFile, "utf8"));
            rmSync(traceFile);
          } catch (err) {
            print(`no trace: ${String(err)}`);
          }
        }
      }
      if (opts.ceiling) {
        const databaseUrl = await dbs.create(`c${round_}`, { migrate: true });
        const ceiling = await nodePgCeiling(databaseUrl, "ceiling", opts.writers, false, sampleBody(), opts.warmup, opts.seconds);
        print(
          `round ${round_} node-postgres ceiling: ${ceiling.throughput}/s p50 ${ceiling.latency.p50Ms} ms p99 ${ceiling.latency.p99Ms} ms`,
        );
      }
      const pgbench = opts.pgbench ? findPgbench() : undefined;
      if (pgbench) {
        const databaseUrl = await dbs.create(`p${round_}`, { migrate: true });
        const ceiling = await pgbenchCeiling(pgbench, databaseUrl, "ceiling", opts.writers, false, sampleBody(), opts.warmup, opts.seconds);
        print(`round ${round_} pgbench ceiling: ${ceiling.throughput}/s p50 ${ceiling.latency.p50Ms} ms p99 ${ceiling.latency.p99Ms} ms`);
      }
      print(
        `load average: ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")}`,
      );
    }
  } finally {
    await dbs.dropAll();
  }
}

await main();
