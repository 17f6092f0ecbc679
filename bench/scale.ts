// Workloads of issue 13 against this project's server: GetSession over many
// sessions in random order, a whole agent turn, 10,000 tails, one session of
// a million events, and two server replicas on one PostgreSQL.

import { performance } from "node:perf_hooks";
import { closedLoop, type LoopResult, sequential } from "./load.js";
import { withClient } from "./postgres.js";
import { sampleProcess } from "./server.js";
import { historyColumns, type LoadedHistory, loadHistory, newClient, type TailRun, tailRun, turn } from "./sessionstore.js";
import { type LatencySummary, round, summarize } from "./stats.js";

/** Sizes of these workloads in one mode of the bench. */
export interface ScalePlan {
  /** Sessions of the random-order GetSession, and events in each. */
  coldSessions: number;
  coldEvents: number;
  coldIterations: number;
  /** Concurrent agent turns (each on its own session). */
  turnConcurrency: number[];
  turnWarmupSeconds: number;
  turnSeconds: number;
  /** Tails, one per session, and appends per second across them. */
  manyTails: { tails: number; rate: number; seconds: number; connections: number };
  /** Events of the one long session, and the calls measured on it and on a small one. */
  bigSession: number;
  bigCalls: number;
  /** Two replicas: writers split over both, and tails on one fed by appends through the other. */
  replicaWriters: number;
  replicaSeconds: number;
  replicaTails: { tails: number; rate: number; seconds: number };
}

export const fullScale: ScalePlan = {
  coldSessions: 1000,
  coldEvents: 200,
  coldIterations: 3000,
  turnConcurrency: [1, 16, 64],
  turnWarmupSeconds: 2,
  turnSeconds: 8,
  manyTails: { tails: 10_000, rate: 200, seconds: 10, connections: 50 },
  bigSession: 1_000_000,
  bigCalls: 300,
  replicaWriters: 16,
  replicaSeconds: 8,
  replicaTails: { tails: 1000, rate: 200, seconds: 5 },
};

/** Harness check only: small enough for CI's smoke run. */
export const smokeScale: ScalePlan = {
  coldSessions: 50,
  coldEvents: 30,
  coldIterations: 50,
  turnConcurrency: [1, 4],
  turnWarmupSeconds: 0.1,
  turnSeconds: 0.5,
  manyTails: { tails: 200, rate: 40, seconds: 0.5, connections: 4 },
  bigSession: 20_000,
  bigCalls: 20,
  replicaWriters: 4,
  replicaSeconds: 0.5,
  replicaTails: { tails: 20, rate: 20, seconds: 0.5 },
};

export interface ColdWindowRun {
  sessions: number;
  eventsEach: number;
  latency: LatencySummary;
  /** Server CPU per call, in ms. */
  cpuMsPerCall: number;
}

export interface TurnRun extends LoopResult {
  concurrency: number;
  /** Turns per second is `throughput`; server CPU per turn in ms (ours) or the Python process's (ADK). */
  cpuMsPerTurn: number;
}

export interface BigSessionRun {
  events: number;
  /** GetSession (window 20) and appends with expected_revision, one at a time, interleaved with a 100-event session. */
  windowBig: LatencySummary;
  windowSmall: LatencySummary;
  appendBig: LatencySummary;
  appendSmall: LatencySummary;
  /** The events table with its indexes and TOAST, per million rows. */
  diskMiBPerMillion: number;
  loadSeconds: number;
}

export interface ReplicaRun {
  /** Appends per second with the writers on one server, then split over two. */
  oneServer: { throughput: number; p50Ms: number; p99Ms: number; cpuMsPerAppend: number };
  twoServers: { throughput: number; p50Ms: number; p99Ms: number; cpuMsPerAppend: number };
  /** Tails on one replica, appends through the other. */
  acrossReplicas: TailRun;
}

export interface ScaleResults {
  cold?: ColdWindowRun;
  turn: { system: "sessionstore" | "adk"; run: TurnRun }[];
  manyTails?: TailRun;
  big?: BigSessionRun;
  replicas?: ReplicaRun;
}

const COLD_APP = "bench-cold";

/** `sessions` sessions of `eventsEach` events each, written by SQL (real protobuf bodies). */
export async function loadColdSessions(databaseUrl: string, sessions: number, eventsEach: number): Promise<number> {
  const began = performance.now();
  await withClient(databaseUrl, async (db) => {
    const baseNs = (BigInt(Date.now()) - BigInt(eventsEach) * 1000n) * 1_000_000n;
    await db.query(
      `INSERT INTO sessions (app_name, user_id, id, state, initial_state, revision, create_time_ns, update_time_ns)
       SELECT $1, 'u' || (g % 100), 'c-' || g, jsonb_build_object('topic', 'order ' || g), '{}', $2::bigint, $3::bigint, $3::bigint
       FROM generate_series(1, $4::int) g`,
      [COLD_APP, eventsEach, baseNs.toString(), sessions],
    );
    const { seqs, ids, times, bodies } = historyColumns(1, eventsEach + 1, baseNs, 1_000_000_000n, "c-");
    await db.query(
      `INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
       SELECT s.pk, x.s, x.e, x.t, x.b, s.app_name, s.user_id
       FROM sessions s CROSS JOIN unnest($2::bigint[], $3::text[], $4::bigint[], $5::bytea[]) AS x(s, e, t, b)
       WHERE s.app_name = $1`,
      [COLD_APP, seqs, ids, times, bodies],
    );
    await db.query("ANALYZE sessions");
    await db.query("ANALYZE events");
  });
  return round((performance.now() - began) / 1000, 1);
}

/** GetSession (window 20) of a different session each call, in random order. */
export async function coldWindowRun(url: string, serverPid: number, plan: ScalePlan): Promise<ColdWindowRun> {
  const client = newClient(url);
  const want = Math.min(20, plan.coldEvents);
  const order = Array.from({ length: plan.coldIterations }, () => 1 + Math.floor(Math.random() * plan.coldSessions));
  let i = 0;
  const op = async () => {
    const g = order[i++ % order.length] as number;
    const { session } = await client.getSession({ appName: COLD_APP, userId: `u${g % 100}`, sessionId: `c-${g}`, numRecentEvents: 20 });
    const events = session?.events ?? [];
    if (events.length !== want || events[events.length - 1]?.seq !== BigInt(plan.coldEvents)) {
      throw new Error(`cold window of c-${g}: got ${events.length} events`);
    }
  };
  for (let w = 0; w < 20; w++) await op();
  i = 0;
  const before = sampleProcess(serverPid).cpuSeconds;
  const latency = await sequential(0, plan.coldIterations, op);
  const cpu = sampleProcess(serverPid).cpuSeconds - before;
  return {
    sessions: plan.coldSessions,
    eventsEach: plan.coldEvents,
    latency,
    cpuMsPerCall: round((cpu / plan.coldIterations) * 1000, 3),
  };
}

/**
 * An agent turn: GetSession with the 20 most recent events, then three
 * appends (the user's message, a tool call, the answer), each with the
 * revision the previous call returned. `concurrency` turns at once, each on
 * its own session.
 */
export async function turnRun(
  url: string,
  serverPid: number,
  tag: string,
  concurrency: number,
  warmupSeconds: number,
  seconds: number,
): Promise<TurnRun> {
  const client = newClient(url);
  const appName = "bench-turn";
  const keys = Array.from({ length: concurrency }, (_, w) => ({ appName, userId: `u${w}`, sessionId: `${tag}-${w}` }));
  for (const key of keys) await client.createSession(key);
  const op = async (w: number, n: number) => {
    const key = keys[w] as (typeof keys)[number];
    const { session } = await client.getSession({ ...key, numRecentEvents: 20 });
    let revision = session?.revision ?? 0n;
    for (let k = 0; k < 3; k++) {
      const res = await client.appendEvent({ ...key, event: turn(n * 3 + k, w), expectedRevision: revision });
      revision = res.revision;
    }
  };
  if (warmupSeconds > 0) await closedLoop(concurrency, warmupSeconds, op);
  const before = sampleProcess(serverPid).cpuSeconds;
  const result = await closedLoop(concurrency, seconds, op, 1_000_000);
  const cpu = sampleProcess(serverPid).cpuSeconds - before;
  return { ...result, concurrency, cpuMsPerTurn: result.ops > 0 ? round((cpu / result.ops) * 1000, 3) : Number.NaN };
}

/** 10,000 tails, one per session, with appends across them. */
export function manyTailsRun(url: string, serverPid: number, plan: ScalePlan): Promise<TailRun> {
  const { tails, rate, seconds, connections } = plan.manyTails;
  return tailRun(url, serverPid, "many", tails, tails, rate, seconds, { connections, openWave: 500 });
}

async function eventsTableBytes(databaseUrl: string): Promise<{ bytes: number; rows: number }> {
  return withClient(databaseUrl, async (db) => {
    const { rows } = await db.query<{ bytes: string; n: string }>(
      "SELECT pg_total_relation_size('events')::text AS bytes, (SELECT count(*) FROM events)::text AS n",
    );
    return { bytes: Number(rows[0]?.bytes), rows: Number(rows[0]?.n) };
  });
}

/**
 * One session of a million events next to one of 100: windowed reads and
 * appends interleaved call by call, so both see the same machine. The size
 * on disk is the growth of the events table (indexes included) over the load.
 */
export async function bigSessionRun(url: string, databaseUrl: string, plan: ScalePlan): Promise<BigSessionRun> {
  const before = await eventsTableBytes(databaseUrl);
  const big = await loadHistory(url, databaseUrl, plan.bigSession, "bench-big");
  const after = await eventsTableBytes(databaseUrl);
  const small = await loadHistory(url, databaseUrl, 100, "bench-big");
  const client = newClient(url);
  const keyOf = (h: LoadedHistory) => ({ appName: h.appName, userId: h.userId, sessionId: h.sessionId });
  const revisions = new Map<LoadedHistory, bigint>([
    [big, BigInt(big.size)],
    [small, BigInt(small.size)],
  ]);
  const times = { windowBig: [] as number[], windowSmall: [] as number[], appendBig: [] as number[], appendSmall: [] as number[] };
  const timed = async (into: number[], call: () => Promise<unknown>) => {
    const began = performance.now();
    await call();
    into.push(performance.now() - began);
  };
  for (let i = 0; i < plan.bigCalls + 10; i++) {
    for (const h of [big, small]) {
      const isBig = h === big;
      const window = isBig ? times.windowBig : times.windowSmall;
      const append = isBig ? times.appendBig : times.appendSmall;
      // The first ten rounds warm up and are dropped.
      const keep = i >= 10;
      await timed(keep ? window : [], async () => {
        const { session } = await client.getSession({ ...keyOf(h), numRecentEvents: 20 });
        if (session?.events.length !== 20) throw new Error(`window of ${h.sessionId}: ${session?.events.length} events`);
      });
      await timed(keep ? append : [], async () => {
        const res = await client.appendEvent({ ...keyOf(h), event: turn(i, 0), expectedRevision: revisions.get(h) });
        revisions.set(h, res.revision);
      });
    }
  }
  const grown = after.bytes - before.bytes;
  const rows = after.rows - before.rows;
  return {
    events: plan.bigSession,
    windowBig: summarize(times.windowBig),
    windowSmall: summarize(times.windowSmall),
    appendBig: summarize(times.appendBig),
    appendSmall: summarize(times.appendSmall),
    diskMiBPerMillion: round((grown / rows / 2 ** 20) * 1_000_000, 1),
    loadSeconds: big.loadSeconds,
  };
}

/** Closed-loop appends (expected_revision, one session per writer) through the given servers, writers round-robin. */
async function appendAcross(urls: string[], pids: number[], tag: string, writers: number, seconds: number) {
  const clients = urls.map((u) => newClient(u));
  const appName = "bench-replicas";
  const keys = Array.from({ length: writers }, (_, w) => ({ appName, userId: `u${w}`, sessionId: `${tag}-${w}` }));
  const revisions: bigint[] = [];
  for (const [w, key] of keys.entries()) {
    const { session } = await (clients[w % clients.length] as (typeof clients)[number]).createSession(key);
    revisions.push(session?.revision ?? 0n);
  }
  const op = async (w: number, n: number) => {
    const client = clients[w % clients.length] as (typeof clients)[number];
    const res = await client.appendEvent({ ...(keys[w] as (typeof keys)[number]), event: turn(n, w), expectedRevision: revisions[w] });
    revisions[w] = res.revision;
  };
  await closedLoop(writers, Math.min(1, seconds), op);
  const cpu = () => pids.reduce((sum, pid) => sum + sampleProcess(pid).cpuSeconds, 0);
  const before = cpu();
  const run = await closedLoop(writers, seconds, op, 1_000_000);
  const used = cpu() - before;
  return {
    throughput: run.throughput,
    p50Ms: run.latency.p50Ms,
    p99Ms: run.latency.p99Ms,
    cpuMsPerAppend: run.ops > 0 ? round((used / run.ops) * 1000, 3) : Number.NaN,
  };
}

/** Two server processes on one database: appends through one and through both, and tails fed across them. */
export async function replicaRun(servers: { url: string; pid: number }[], plan: ScalePlan): Promise<ReplicaRun> {
  const [a, b] = servers as [{ url: string; pid: number }, { url: string; pid: number }];
  const oneServer = await appendAcross([a.url], [a.pid, b.pid], "one", plan.replicaWriters, plan.replicaSeconds);
  const twoServers = await appendAcross([a.url, b.url], [a.pid, b.pid], "two", plan.replicaWriters, plan.replicaSeconds);
  const { tails, rate, seconds } = plan.replicaTails;
  const acrossReplicas = await tailRun(a.url, a.pid, "across", tails, tails, rate, seconds, { writerUrl: b.url });
  return { oneServer, twoServers, acrossReplicas };
}
