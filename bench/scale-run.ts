// Runs issue 13's workloads (bench/scale.ts) inside `npm run bench`: the
// random-order GetSession with the window workload, the agent turn next to
// ADK, and, as "scale", 10,000 tails, the million-event session and two
// server replicas, on a database and servers of their own.

import type { AdkPeer } from "./adk.js";
import type { Plan, Workload } from "./plan.js";
import type { BenchDatabases } from "./postgres.js";
import {
  bigSessionRun,
  coldWindowRun,
  fullScale,
  loadColdSessions,
  manyTailsRun,
  replicaRun,
  type ScalePlan,
  type ScaleResults,
  smokeScale,
  turnRun,
} from "./scale.js";
import { type BenchServer, startServer } from "./server.js";

export interface ScaleContext {
  plan: Plan;
  root: string;
  dbs: BenchDatabases;
  /** The bench's main server and its database. */
  server: BenchServer;
  storeUrl: string;
  peer: AdkPeer | undefined;
  log: (msg: string) => void;
}

export function scalePlanFor(plan: Plan): ScalePlan {
  return plan.mode === "full" ? fullScale : smokeScale;
}

export async function runScale({ plan, root, dbs, server, storeUrl, peer, log }: ScaleContext): Promise<ScaleResults | undefined> {
  const runs = (w: Workload) => plan.only.includes(w);
  if (!runs("window") && !runs("turn") && !runs("scale")) return undefined;
  const sp = scalePlanFor(plan);
  const out: ScaleResults = { turn: [] };

  if (runs("window")) {
    const loaded = await loadColdSessions(storeUrl, sp.coldSessions, sp.coldEvents);
    log(`loaded ${sp.coldSessions} sessions of ${sp.coldEvents} events in ${loaded} s`);
    out.cold = await coldWindowRun(server.url, server.pid, sp);
    log(
      `GetSession over ${sp.coldSessions} sessions in random order: p50 ${out.cold.latency.p50Ms} ms, ${out.cold.cpuMsPerCall} ms CPU per call`,
    );
  }

  if (runs("turn")) {
    for (const concurrency of sp.turnConcurrency) {
      const ours = await turnRun(server.url, server.pid, `turn${concurrency}`, concurrency, sp.turnWarmupSeconds, sp.turnSeconds);
      out.turn.push({ system: "sessionstore", run: ours });
      log(`turn x${concurrency}: sessionstore ${ours.throughput} turns/s p50 ${ours.latency.p50Ms} ms p99 ${ours.latency.p99Ms} ms`);
      if (peer) {
        const adk = await peer.turn(`turn${concurrency}`, concurrency, sp.turnWarmupSeconds, sp.turnSeconds);
        out.turn.push({ system: "adk", run: adk });
        log(`turn x${concurrency}: ADK ${adk.throughput} turns/s p50 ${adk.latency.p50Ms} ms p99 ${adk.latency.p99Ms} ms`);
      }
    }
  }

  if (runs("scale")) {
    const url = await dbs.create("scale", { migrate: false });
    // The million-event session is past the default cap of 100,000 events per session.
    const env = {
      SESSIONSTORE_POOL_SIZE: String(plan.poolSize),
      SESSIONSTORE_POLICY: JSON.stringify({ apps: { "bench-big": { limits: { maxEventsPerSession: 10 * sp.bigSession } } } }),
    };
    const a = await startServer({ root, databaseUrl: url, env });
    let b: BenchServer | undefined;
    try {
      out.manyTails = await manyTailsRun(a.url, a.pid, sp);
      const t = out.manyTails;
      log(`${t.tails} tails: ${t.deliveries}/${t.expected} delivered, p99 ${t.latency.p99Ms} ms, server RSS ${t.serverRssMiB} MiB`);
      out.big = await bigSessionRun(a.url, url, sp);
      const big = out.big;
      log(
        `${big.events}-event session: window p50 ${big.windowBig.p50Ms} ms (100 events: ${big.windowSmall.p50Ms}), append p50 ${big.appendBig.p50Ms} ms (${big.appendSmall.p50Ms}); ${big.diskMiBPerMillion} MiB per million events`,
      );
      b = await startServer({ root, databaseUrl: url, env });
      out.replicas = await replicaRun(
        [
          { url: a.url, pid: a.pid },
          { url: b.url, pid: b.pid },
        ],
        sp,
      );
      const r = out.replicas;
      log(
        `replicas: ${r.oneServer.throughput}/s through one, ${r.twoServers.throughput}/s through two; tails across: p99 ${r.acrossReplicas.latency.p99Ms} ms`,
      );
    } finally {
      await b?.stop();
      await a.stop();
    }
  }
  return out;
}

/** What the smoke run checks of these workloads besides "it ran". */
export function scaleFaults(scale: ScaleResults | undefined): string[] {
  if (!scale) return [];
  const faults: string[] = [];
  for (const t of [scale.manyTails, scale.replicas?.acrossReplicas]) {
    if (t && t.deliveries !== t.expected) faults.push(`tails ${t.tails}/${t.sessions}: ${t.deliveries} of ${t.expected} delivered`);
  }
  for (const { system, run } of scale.turn) {
    if (run.errors > 0) faults.push(`turn ${system} x${run.concurrency}: ${run.errors} errors (${run.firstError})`);
    if (run.ops === 0) faults.push(`turn ${system} x${run.concurrency}: no turn completed`);
  }
  return faults;
}
