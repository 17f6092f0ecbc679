// The workloads against this project's server, over gRPC.

import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { create, toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../gen/ts/sessionstore/v1/event_pb.js";
import { createSessionStoreClient, type SessionStoreClient } from "../src/client/create-client.js";
import { nsToTimestamp } from "../src/domain/time.js";
import { closedLoop, type LoopResult, sequential, sleep, TURN_TEXT } from "./load.js";
import { withClient } from "./postgres.js";
import { type ProcSample, sampleProcess } from "./server.js";
import { type LatencySummary, round, summarize } from "./stats.js";

/** One append workload against a running server, whichever client drives it. */
export interface AppendLoad {
  url: string;
  /** The server's process, whose CPU and memory are sampled. */
  serverPid: number;
  /** Makes the run's session ids its own. */
  tag: string;
  writers: number;
  /** All writers on one session instead of one each. */
  hot: boolean;
  warmupSeconds: number;
  seconds: number;
}

export interface AppendRun extends LoopResult {
  writers: number;
  hot: boolean;
  /** The process that does the work: the server (ours), the Python process (ADK). */
  cpuSecondsPer10k?: number | undefined;
  rssMiB?: number | undefined;
  hwmMiB?: number | undefined;
}

export function newClient(url: string): SessionStoreClient {
  return createSessionStoreClient(url, { timeoutMs: 60_000 });
}

export function turn(n: number, writer: number) {
  return {
    author: "user",
    invocationId: `inv-${writer}-${n}`,
    content: { role: "user", parts: [{ data: { case: "text" as const, value: TURN_TEXT } }] },
    actions: { stateDelta: { turn: n } },
  };
}

/** The protobuf body of an appended turn, for peers that store the same bytes. */
export function sampleBody(): Uint8Array {
  const event = create(EventSchema, {
    ...turn(1, 0),
    id: randomUUID(),
    seq: 1n,
    timestamp: nsToTimestamp(BigInt(Date.now()) * 1_000_000n),
  });
  return toBinary(EventSchema, event);
}

/**
 * Closed-loop appends: `writers` each on its own session (with
 * expected_revision, as an agent that holds its session does), or all on one
 * hot session (without it: they race by design). Server CPU and memory come
 * from /proc over the measured part only.
 */
export async function appendRun({ url, serverPid, tag, writers, hot, warmupSeconds, seconds }: AppendLoad): Promise<AppendRun> {
  const client = newClient(url);
  const appName = "bench-append";
  const keys = Array.from({ length: hot ? 1 : writers }, (_, w) => ({ appName, userId: `u${w}`, sessionId: `${tag}-${w}` }));
  const revisions: bigint[] = [];
  for (const key of keys) {
    const { session } = await client.createSession(key);
    revisions.push(session?.revision ?? 0n);
  }
  const op = async (w: number, n: number) => {
    const slot = hot ? 0 : w;
    const key = keys[slot] as (typeof keys)[number];
    const res = await client.appendEvent({ ...key, event: turn(n, w), expectedRevision: hot ? undefined : revisions[slot] });
    if (!hot) revisions[slot] = res.revision;
  };
  if (warmupSeconds > 0) await closedLoop(writers, warmupSeconds, op);
  const before = sampleProcess(serverPid);
  const result = await closedLoop(writers, seconds, op, 1_000_000);
  const after = sampleProcess(serverPid);
  return { ...result, writers, hot, ...perTenThousand(before, after, result.ops) };
}

export function perTenThousand(before: ProcSample, after: ProcSample, ops: number) {
  return {
    cpuSecondsPer10k: ops > 0 ? round(((after.cpuSeconds - before.cpuSeconds) / ops) * 10_000, 2) : Number.NaN,
    rssMiB: round(after.rssMiB, 1),
    hwmMiB: round(after.hwmMiB, 1),
  };
}

export interface LoadedHistory {
  appName: string;
  userId: string;
  sessionId: string;
  size: number;
  loadSeconds: number;
}

/**
 * A session with `size` events: created through the server, its events
 * written straight into the events table (real protobuf bodies, one per
 * row, in the columns the append path fills), then its revision set.
 */
export async function loadHistory(url: string, databaseUrl: string, size: number, appName = "bench-window"): Promise<LoadedHistory> {
  const began = performance.now();
  const client = newClient(url);
  const key = { appName, userId: "reader", sessionId: `history-${size}` };
  await client.createSession(key);
  await withClient(databaseUrl, async (db) => {
    const { rows } = await db.query<{ pk: bigint }>("SELECT pk FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3", [
      key.appName,
      key.userId,
      key.sessionId,
    ]);
    const pk = rows[0]?.pk;
    if (pk === undefined) throw new Error("history session not found");
    const baseNs = (BigInt(Date.now()) - BigInt(size)) * 1_000_000n;
    const batch = 5000;
    for (let from = 1; from <= size; from += batch) {
      const { seqs, ids, times, bodies } = historyColumns(from, Math.min(from + batch, size + 1), baseNs, 1_000_000n, "h-", (seq) => ({
        author: seq % 2 ? "user" : "agent",
      }));
      await db.query(
        `INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
         SELECT $1::bigint, s, e, t, b, $2, $3 FROM unnest($4::bigint[], $5::text[], $6::bigint[], $7::bytea[]) AS x(s, e, t, b)`,
        [pk.toString(), key.appName, key.userId, seqs, ids, times, bodies],
      );
    }
    const lastNs = baseNs + BigInt(size) * 1_000_000n;
    await db.query("UPDATE sessions SET revision = $2, update_time_ns = $3 WHERE pk = $1", [pk.toString(), size, lastNs.toString()]);
    await db.query("ANALYZE events");
  });
  return { ...key, size, loadSeconds: round((performance.now() - began) / 1000, 1) };
}

/**
 * The events table's columns for events `from` up to (not including) `to`,
 * turns `stepNs` apart after `baseNs`: ids `${prefix}${seq}`, real protobuf
 * bodies, for `unnest` into the table.
 */
export function historyColumns(
  from: number,
  to: number,
  baseNs: bigint,
  stepNs: bigint,
  prefix: string,
  fields: (seq: number) => { author?: string } = () => ({}),
): { seqs: string[]; ids: string[]; times: string[]; bodies: Buffer[] } {
  const out = { seqs: [] as string[], ids: [] as string[], times: [] as string[], bodies: [] as Buffer[] };
  for (let seq = from; seq < to; seq++) {
    const ts = baseNs + BigInt(seq) * stepNs;
    const id = `${prefix}${seq}`;
    const event = create(EventSchema, { ...turn(seq, 0), ...fields(seq), id, seq: BigInt(seq), timestamp: nsToTimestamp(ts) });
    out.seqs.push(String(seq));
    out.ids.push(id);
    out.times.push(ts.toString());
    out.bodies.push(Buffer.from(toBinary(EventSchema, event)));
  }
  return out;
}

/** GetSession with the 20 most recent events, one call at a time. */
export async function windowRun(url: string, history: LoadedHistory, warmup: number, iterations: number): Promise<LatencySummary> {
  const client = newClient(url);
  const { appName, userId, sessionId, size } = history;
  const want = Math.min(20, size);
  return sequential(warmup, iterations, async () => {
    const { session } = await client.getSession({ appName, userId, sessionId, numRecentEvents: 20 });
    const events = session?.events ?? [];
    if (events.length !== want || events[events.length - 1]?.seq !== BigInt(size)) {
      throw new Error(`window of ${sessionId}: got ${events.length} events ending at ${events[events.length - 1]?.seq}`);
    }
  });
}

export const LIST_APP = "bench-list";
const LIST_USERS = 100;

/** `count` sessions of one app over 100 users, written by SQL, update times all distinct. */
export async function loadSessions(databaseUrl: string, count: number): Promise<number> {
  const began = performance.now();
  await withClient(databaseUrl, async (db) => {
    const baseNs = (BigInt(Date.now()) - BigInt(count) * 1000n) * 1_000_000n;
    await db.query(
      `INSERT INTO sessions (app_name, user_id, id, state, revision, create_time_ns, update_time_ns)
       SELECT $1, 'u' || (g % ${LIST_USERS}), 's-' || lpad(g::text, 7, '0'), jsonb_build_object('topic', 'order ' || g),
              0, $2::bigint + g::bigint * 1000000, $2::bigint + g::bigint * 1000000
       FROM generate_series(1, $3::int) g`,
      [LIST_APP, baseNs.toString(), count],
    );
    await db.query(
      `INSERT INTO user_states (app_name, user_id, state, update_time_ns)
       SELECT $1, 'u' || g, jsonb_build_object('tier', 'gold'), $2::bigint FROM generate_series(0, ${LIST_USERS - 1}) g`,
      [LIST_APP, baseNs.toString()],
    );
    await db.query('INSERT INTO app_states (app_name, state, update_time_ns) VALUES ($1, \'{"region": "eu"}\', $2)', [
      LIST_APP,
      baseNs.toString(),
    ]);
    await db.query("ANALYZE sessions");
  });
  return round((performance.now() - began) / 1000, 1);
}

export interface ListRun {
  first: LatencySummary;
  deep: LatencySummary;
  /** 1-based index of the first session on the deep page. */
  deepOffset: number;
  /** Calls it took to reach the deep page through the page token chain. */
  walkCalls: number;
}

/**
 * The first page of 100, and a page of 100 near the end reached through the
 * real page token chain (pages of 1,000 to get there, then 100).
 */
export async function listRun(url: string, count: number, warmup: number, iterations: number): Promise<ListRun> {
  const client = newClient(url);
  const deepOffset = Math.max(0, count - 1000);
  let token = "";
  let offset = 0;
  let walkCalls = 0;
  while (offset < deepOffset) {
    const pageSize = deepOffset - offset >= 1000 ? 1000 : 100;
    const res = await client.listSessions({ appName: LIST_APP, pageSize, pageToken: token });
    walkCalls++;
    offset += res.sessions.length;
    token = res.nextPageToken;
    if (!token) throw new Error(`listing ended at ${offset} sessions`);
  }
  const expectPage = (first: number) => (sessions: { id: string }[]) => {
    const want = `s-${String(first).padStart(7, "0")}`;
    if (sessions.length !== 100 || sessions[0]?.id !== want) throw new Error(`page starting at ${want}: got ${sessions[0]?.id}`);
  };
  const checkFirst = expectPage(1);
  const checkDeep = expectPage(deepOffset + 1);
  const first = await sequential(warmup, iterations, async () => {
    checkFirst((await client.listSessions({ appName: LIST_APP, pageSize: 100 })).sessions);
  });
  const deep = await sequential(warmup, iterations, async () => {
    checkDeep((await client.listSessions({ appName: LIST_APP, pageSize: 100, pageToken: token })).sessions);
  });
  return { first, deep, deepOffset: deepOffset + 1, walkCalls };
}

export interface TailRun {
  tails: number;
  sessions: number;
  appends: number;
  deliveries: number;
  expected: number;
  /** Deliveries the client saw before the append's own response. */
  beforeAck: number;
  latency: LatencySummary;
  openSeconds: number;
  serverRssMiB: number;
  /** The server's CPU from the first append until every event was delivered (or the wait gave up). */
  serverCpuSeconds?: number;
  /**
   * The server's own view of the same deliveries: its feed-lag histogram
   * (commit to the tail handing the event over), read from /metrics before
   * and after, as the upper bounds of the buckets holding the p50 and p99.
   * Next to `latency` it tells the server's delay from the harness's.
   */
  serverLag?: { count: number; p50UpToMs: number; p99UpToMs: number };
  /** The harness's own event-loop delay while it received: a busy receiver makes deliveries look late. */
  harnessLoopDelay?: { p99Ms: number; maxMs: number };
}

/** The feed-lag histogram's cumulative bucket counts, all scopes together, from the server's /metrics. */
async function feedLagBuckets(url: string): Promise<Map<number, number>> {
  const buckets = new Map<number, number>();
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const line of text.split("\n")) {
      const m = /^sessionstore_feed_lag_seconds_bucket\{.*le="([^"]+)".*\} (\d+)/.exec(line);
      if (!m) continue;
      const le = m[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[1]);
      buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
    }
  } catch {
    // A server without metrics: the figure is left out.
  }
  return buckets;
}

function lagBetween(before: Map<number, number>, after: Map<number, number>): TailRun["serverLag"] {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const count = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  if (bounds.length === 0 || count <= 0) return undefined;
  const upTo = (q: number) => {
    for (const le of bounds) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= q * count) return le * 1000;
    return Number.POSITIVE_INFINITY;
  };
  return { count, p50UpToMs: upTo(0.5), p99UpToMs: upTo(0.99) };
}

/**
 * `tails` StreamEvents calls spread over `sessions` sessions (over ten
 * HTTP/2 connections), then appends at `rate` per second for `seconds`,
 * round-robin over the sessions. Latency: from the append's response
 * arriving at the client to the event arriving on each tail (0 when the
 * tail was first).
 */
export async function tailRun(
  url: string,
  serverPid: number,
  tag: string,
  tails: number,
  sessions: number,
  rate: number,
  seconds: number,
  options: { connections?: number; writerUrl?: string; openWave?: number } = {},
): Promise<TailRun> {
  // More than a few hundred streams on one HTTP/2 connection run into its session memory limit.
  const connections = Array.from({ length: Math.min(options.connections ?? 10, tails) }, () => newClient(url));
  // Another replica's URL: appends there, tails here (delivery across replicas).
  const writer = newClient(options.writerUrl ?? url);
  const appName = `bench-tail-${tag}`;
  const keys = Array.from({ length: sessions }, (_, s) => ({ appName, userId: `u${s % 10}`, sessionId: `s${s}` }));
  // 16 at a time: 10,000 sessions one by one would take longer than the measurement.
  for (let i = 0; i < keys.length; i += 16) await Promise.all(keys.slice(i, i + 16).map((key) => writer.createSession(key)));

  const abort = new AbortController();
  // Every stream listens on the one signal.
  setMaxListeners(tails + 10, abort.signal);
  const deliveries: { id: string; at: number }[] = [];
  let caughtUp = 0;
  let failed: unknown;
  const opened = performance.now();
  const open = (i: number) => async () => {
    const client = connections[i % connections.length] as SessionStoreClient;
    const key = keys[i % sessions] as (typeof keys)[number];
    try {
      for await (const res of client.streamEvents({ ...key, start: { case: "afterSeq", value: 0n } }, { signal: abort.signal })) {
        if (res.kind.case === "event") deliveries.push({ id: res.kind.value.event?.id ?? "", at: performance.now() });
        else if (res.kind.case === "caughtUp") caughtUp++;
      }
    } catch (err) {
      if (!abort.signal.aborted) failed ??= err;
    }
  };
  // Opened in waves of `openWave`, each caught up before the next: clients
  // arrive over time, and 10,000 calls in one instant starve the server's
  // event loop long enough for its database connects to time out.
  const wave = options.openWave ?? tails;
  const streams: Promise<void>[] = [];
  const deadline = performance.now() + 300_000;
  for (let from = 0; from < tails; from += wave) {
    const to = Math.min(tails, from + wave);
    for (let i = from; i < to; i++) streams.push(open(i)());
    while (caughtUp < to) {
      if (failed) throw failed;
      if (performance.now() > deadline) throw new Error(`only ${caughtUp} of ${tails} tails caught up`);
      await sleep(20);
    }
  }
  const openSeconds = round((performance.now() - opened) / 1000, 2);

  const acks = new Map<string, number>();
  const lagBefore = await feedLagBuckets(url);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = sampleProcess(serverPid).cpuSeconds;
  const total = Math.max(1, Math.round(rate * seconds));
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let k = 0; k < total; k++) {
    const due = started + (k * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const key = keys[k % sessions] as (typeof keys)[number];
    const id = `t-${k}`;
    inFlight.push(
      writer.appendEvent({ ...key, event: { ...turn(k, 0), id } }).then(() => {
        acks.set(id, performance.now());
      }),
    );
  }
  await Promise.all(inFlight);
  const expected = total * (tails / sessions);
  const settle = performance.now() + 30_000;
  while (deliveries.length < expected && performance.now() < settle) await sleep(20);
  const afterDeliveries = sampleProcess(serverPid);
  const serverRssMiB = round(afterDeliveries.rssMiB, 1);
  const serverCpuSeconds = round(afterDeliveries.cpuSeconds - cpuBefore, 2);
  loopDelay.disable();
  const harnessLoopDelay = { p99Ms: round(loopDelay.percentile(99) / 1e6, 1), maxMs: round(loopDelay.max / 1e6, 1) };
  const serverLag = lagBetween(lagBefore, await feedLagBuckets(url));
  abort.abort();
  await Promise.all(streams);

  let beforeAck = 0;
  const latencies: number[] = [];
  for (const d of deliveries) {
    const ack = acks.get(d.id);
    if (ack === undefined) continue;
    if (d.at < ack) beforeAck++;
    latencies.push(Math.max(0, d.at - ack));
  }
  return {
    tails,
    sessions,
    appends: total,
    deliveries: deliveries.length,
    expected,
    beforeAck,
    latency: summarize(latencies),
    openSeconds,
    serverRssMiB,
    serverCpuSeconds,
    serverLag,
    harnessLoopDelay,
  };
}

/** StreamEvents from seq 0 of a long session until caught_up: events per second. */
export async function catchUpRun(
  url: string,
  history: LoadedHistory,
): Promise<{ events: number; seconds: number; eventsPerSecond: number }> {
  const client = newClient(url);
  const abort = new AbortController();
  let events = 0;
  const began = performance.now();
  try {
    for await (const res of client.streamEvents(
      { appName: history.appName, userId: history.userId, sessionId: history.sessionId, start: { case: "afterSeq", value: 0n } },
      { signal: abort.signal },
    )) {
      if (res.kind.case === "event") events++;
      else if (res.kind.case === "caughtUp") break;
    }
  } finally {
    abort.abort();
  }
  const seconds = (performance.now() - began) / 1000;
  if (events !== history.size) throw new Error(`catch-up delivered ${events} of ${history.size} events`);
  return { events, seconds: round(seconds, 2), eventsPerSecond: round(events / seconds, 0) };
}
