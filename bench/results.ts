// The shape of bench/results/*.json, and the medians the report is made of.

import type { Plan } from "./plan.js";
import type { ScaleResults } from "./scale.js";
import type { AppendRun, TailRun } from "./sessionstore.js";
import { type LatencySummary, median, ratio, round } from "./stats.js";

export type System = "sessionstore" | "sessionstore-ts" | "adk" | "ceiling-pgbench" | "ceiling-node-pg";

export interface RepResult {
  rep: number;
  append: { system: System; run: AppendRun }[];
  window: { system: System; size: number; latency: LatencySummary }[];
  /** ListEvents, a page of the 20 newest events; absent in results from before it was measured. */
  listEvents?: { size: number; latency: LatencySummary }[];
  list: { system: System; page: "first" | "deep" | "all"; latency: LatencySummary }[];
  tails: TailRun[];
  catchUp: { events: number; seconds: number; eventsPerSecond: number }[];
}

export interface Results {
  meta: Record<string, unknown>;
  plan: Plan;
  loads: Record<string, number>;
  memory: { idleRssMiB: number; peakRssMiB: number; afterAppendsRssMiB?: number; finalRssMiB: number };
  deepPage: { offset: number; walkCalls: number } | undefined;
  reps: RepResult[];
  serverProblems: string[];
  /** Issue 13's workloads (bench/scale.ts): the agent turn per rep, the rest once. */
  scale?: ScaleResults;
}

export interface AppendSummary {
  system: System;
  writers: number;
  hot: boolean;
  throughput: number;
  throughputMin: number;
  throughputMax: number;
  p50Ms: number;
  p99Ms: number;
  cpuSecondsPer10k: number;
  rssMiB: number;
  errors: number;
}

export interface Summary {
  append: AppendSummary[];
  window: { system: System; size: number; p50Ms: number; p99Ms: number }[];
  listEvents: { size: number; p50Ms: number; p99Ms: number }[];
  list: { system: System; page: string; p50Ms: number; p99Ms: number }[];
  tails: {
    tails: number;
    sessions: number;
    p50Ms: number;
    p99Ms: number;
    delivered: string;
    beforeAck: number;
    rssMiB: number;
    /** Medians over the repetitions of the server's feed-lag p50/p99 bucket bounds and the harness's loop delay p99. */
    serverLagP50UpToMs: number;
    serverLagP99UpToMs: number;
    harnessDelayP99Ms: number;
  }[];
  catchUpEventsPerSecond: number;
  targets: Target[];
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean | undefined;
}

const med = (xs: number[]) => round(median(xs), 3);

export function summarize(results: Results): Summary {
  const reps = results.reps;
  const appendKeys = new Map<string, { system: System; writers: number; hot: boolean }>();
  for (const r of reps)
    for (const a of r.append) appendKeys.set(`${a.system}/${a.run.writers}/${a.run.hot}`, { ...a.run, system: a.system });
  const append: AppendSummary[] = [...appendKeys.values()].map((k) => {
    const runs = reps.flatMap((r) => r.append.filter((a) => a.system === k.system && a.run.writers === k.writers && a.run.hot === k.hot));
    const tp = runs.map((a) => a.run.throughput);
    return {
      system: k.system,
      writers: k.writers,
      hot: k.hot,
      throughput: round(median(tp), 1),
      throughputMin: Math.min(...tp),
      throughputMax: Math.max(...tp),
      p50Ms: med(runs.map((a) => a.run.latency.p50Ms)),
      p99Ms: med(runs.map((a) => a.run.latency.p99Ms)),
      cpuSecondsPer10k: round(median(runs.map((a) => a.run.cpuSecondsPer10k ?? Number.NaN)), 2),
      rssMiB: round(median(runs.map((a) => a.run.rssMiB ?? Number.NaN)), 1),
      errors: runs.reduce((s, a) => s + a.run.errors, 0),
    };
  });

  const windowKeys = new Map<string, { system: System; size: number }>();
  for (const r of reps) for (const w of r.window) windowKeys.set(`${w.system}/${w.size}`, w);
  const window = [...windowKeys.values()].map((k) => {
    const runs = reps.flatMap((r) => r.window.filter((w) => w.system === k.system && w.size === k.size));
    return { system: k.system, size: k.size, p50Ms: med(runs.map((w) => w.latency.p50Ms)), p99Ms: med(runs.map((w) => w.latency.p99Ms)) };
  });

  const listEventSizes = [...new Set(reps.flatMap((r) => (r.listEvents ?? []).map((e) => e.size)))];
  const listEvents = listEventSizes.map((size) => {
    const runs = reps.flatMap((r) => (r.listEvents ?? []).filter((e) => e.size === size));
    return { size, p50Ms: med(runs.map((e) => e.latency.p50Ms)), p99Ms: med(runs.map((e) => e.latency.p99Ms)) };
  });

  const listKeys = new Map<string, { system: System; page: string }>();
  for (const r of reps) for (const l of r.list) listKeys.set(`${l.system}/${l.page}`, l);
  const list = [...listKeys.values()].map((k) => {
    const runs = reps.flatMap((r) => r.list.filter((l) => l.system === k.system && l.page === k.page));
    return { system: k.system, page: k.page, p50Ms: med(runs.map((l) => l.latency.p50Ms)), p99Ms: med(runs.map((l) => l.latency.p99Ms)) };
  });

  const tailKeys = new Map<string, { tails: number; sessions: number }>();
  for (const r of reps) for (const t of r.tails) tailKeys.set(`${t.tails}/${t.sessions}`, t);
  const tails = [...tailKeys.values()].map((k) => {
    const runs = reps.flatMap((r) => r.tails.filter((t) => t.tails === k.tails && t.sessions === k.sessions));
    const delivered = runs.reduce((s, t) => s + t.deliveries, 0);
    const expected = runs.reduce((s, t) => s + t.expected, 0);
    return {
      tails: k.tails,
      sessions: k.sessions,
      p50Ms: med(runs.map((t) => t.latency.p50Ms)),
      p99Ms: med(runs.map((t) => t.latency.p99Ms)),
      delivered: `${fmt(delivered)} / ${fmt(expected)}`,
      beforeAck: runs.reduce((s, t) => s + t.beforeAck, 0),
      rssMiB: round(median(runs.map((t) => t.serverRssMiB)), 1),
      serverLagP50UpToMs: median(runs.map((t) => t.serverLag?.p50UpToMs ?? Number.NaN)),
      serverLagP99UpToMs: median(runs.map((t) => t.serverLag?.p99UpToMs ?? Number.NaN)),
      harnessDelayP99Ms: round(median(runs.map((t) => t.harnessLoopDelay?.p99Ms ?? Number.NaN)), 1),
    };
  });

  const catchUpEventsPerSecond = round(median(reps.flatMap((r) => r.catchUp.map((c) => c.eventsPerSecond))), 0);
  return { append, window, listEvents, list, tails, catchUpEventsPerSecond, targets: targets(results, append, window, listEvents, list) };
}

function targets(
  results: Results,
  append: AppendSummary[],
  window: Summary["window"],
  listEvents: Summary["listEvents"],
  list: Summary["list"],
): Target[] {
  const plan = results.plan;
  const out: Target[] = [];
  const add = (name: string, goal: string, value: number, met: (v: number) => boolean, measured: () => string, missing = "not run") =>
    out.push({
      name,
      goal,
      measured: Number.isFinite(value) ? measured() : missing,
      met: Number.isFinite(value) ? met(value) : undefined,
    });
  const at = (system: System, writers: number) => append.find((a) => a.system === system && a.writers === writers && !a.hot);

  const low = Math.min(...plan.appendWriters);
  const one = at("sessionstore", low);
  const oneNodePg = at("ceiling-node-pg", low);
  add(
    `One writer: append p50 (Go client), ${low} writer`,
    "≤ 1.0 ms",
    one?.p50Ms ?? Number.NaN,
    (v) => v <= 1.0,
    () => `${one?.p50Ms} ms`,
  );
  const vsNodePg = ratio(one?.throughput, oneNodePg?.throughput);
  add(
    "One writer: appends/s vs the node-postgres ceiling",
    "≥ 0.4×",
    vsNodePg,
    (v) => v >= 0.4,
    () => `${vsNodePg.toFixed(2)}× (${fmt(one?.throughput)} vs ${fmt(oneNodePg?.throughput)} appends/s)`,
    "ceiling not run",
  );

  const top = Math.max(...plan.appendWriters);
  const ours = at("sessionstore", top);
  const adk = at("adk", top);
  const pgbench = at("ceiling-pgbench", top);
  const vsAdk = ratio(ours?.throughput, adk?.throughput);
  add(
    `Append throughput, ${top} writers, vs ADK`,
    "≥ 10×",
    vsAdk,
    (v) => v >= 10,
    () => `${vsAdk.toFixed(1)}× (${fmt(ours?.throughput)} vs ${fmt(adk?.throughput)} appends/s)`,
    "ADK not run",
  );
  const vsPgbench = ratio(ours?.throughput, pgbench?.throughput);
  add(
    `Append throughput, ${top} writers, vs the per-transaction ceiling (pgbench)`,
    "≥ 1.0×",
    vsPgbench,
    (v) => v >= 1.0,
    () =>
      `${vsPgbench.toFixed(2)}× (${fmt(ours?.throughput)} vs ${fmt(pgbench?.throughput)} appends/s); server CPU ${((ours?.cpuSecondsPer10k ?? Number.NaN) / 10).toFixed(3)} ms per append`,
    "ceiling not run",
  );

  const sizes = plan.historySizes;
  const hi = Math.max(...sizes);
  const lo = Math.min(...sizes);
  const win = (system: System, size: number) => window.find((w) => w.system === system && w.size === size);
  const large = win("sessionstore", hi);
  const small = win("sessionstore", lo);
  const adkLarge = win("adk", hi);
  add(
    `Windowed GetSession (20 of ${fmt(hi)} events), p50`,
    "≤ 1.0 ms",
    large?.p50Ms ?? Number.NaN,
    (v) => v <= 1.0,
    () => `${large?.p50Ms} ms`,
  );
  const vsAdkRead = ratio(adkLarge?.p50Ms, large?.p50Ms);
  add(
    `Windowed GetSession (20 of ${fmt(hi)} events) vs ADK`,
    "≥ 4× faster (p50)",
    vsAdkRead,
    (v) => v >= 4,
    () => `${vsAdkRead.toFixed(1)}× (${large?.p50Ms} ms vs ${adkLarge?.p50Ms} ms)`,
    "ADK not run",
  );
  const flat = ratio(large?.p50Ms, small?.p50Ms);
  add(
    `Windowed GetSession, ${fmt(hi)} vs ${fmt(lo)} events`,
    "≤ 1.5× (median)",
    flat,
    (v) => v <= 1.5,
    () => `${flat.toFixed(2)}× (${large?.p50Ms} ms vs ${small?.p50Ms} ms)`,
  );
  const newest = listEvents.find((e) => e.size === hi);
  add(
    `ListEvents, the 20 newest of ${fmt(hi)} events, p50`,
    "≤ 1.0 ms",
    newest?.p50Ms ?? Number.NaN,
    (v) => v <= 1.0,
    () => `${newest?.p50Ms} ms`,
  );

  const first = list.find((l) => l.system === "sessionstore" && l.page === "first");
  const deep = list.find((l) => l.system === "sessionstore" && l.page === "deep");
  add(
    "ListSessions, first page of 100, p50",
    "≤ 1.0 ms",
    first?.p50Ms ?? Number.NaN,
    (v) => v <= 1.0,
    () => `${first?.p50Ms} ms`,
  );
  const deepRatio = ratio(deep?.p50Ms, first?.p50Ms);
  add(
    "ListSessions, deep page vs first page",
    "as fast (≤ 1.1× median, to allow for noise)",
    deepRatio,
    (v) => v <= 1.1,
    () => `${deepRatio.toFixed(2)}× (${deep?.p50Ms} ms vs ${first?.p50Ms} ms)`,
  );

  const many = results.scale?.manyTails;
  add(
    `${fmt(many?.tails)} tails, one per session: delivery p99 from acknowledgement`,
    "≤ 100 ms",
    many ? many.latency.p99Ms : Number.NaN,
    (v) => v <= 100,
    () => `${many?.latency.p99Ms} ms (${fmt(many?.deliveries)} of ${fmt(many?.expected)} delivered)`,
  );
  add(
    `${fmt(many?.tails)} tails: server resident memory`,
    "≤ 1,024 MiB",
    many?.serverRssMiB ?? Number.NaN,
    (v) => v <= 1024,
    () => `${fmt(many?.serverRssMiB)} MiB`,
  );
  const big = results.scale?.big;
  const bigWindow = ratio(big?.windowBig.p50Ms, big?.windowSmall.p50Ms);
  add(
    `GetSession (window 20), ${fmt(big?.events)} vs 100 events`,
    "≤ 1.5× (p50)",
    bigWindow,
    (v) => v <= 1.5,
    () => `${bigWindow.toFixed(2)}× (${big?.windowBig.p50Ms} ms vs ${big?.windowSmall.p50Ms} ms)`,
  );
  const bigAppend = ratio(big?.appendBig.p50Ms, big?.appendSmall.p50Ms);
  add(
    `AppendEvent, ${fmt(big?.events)} vs 100 events`,
    "≤ 1.5× (p50)",
    bigAppend,
    (v) => v <= 1.5,
    () => `${bigAppend.toFixed(2)}× (${big?.appendBig.p50Ms} ms vs ${big?.appendSmall.p50Ms} ms)`,
  );
  return out;
}

export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
