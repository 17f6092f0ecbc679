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
  list: { system: System; page: string; p50Ms: number; p99Ms: number }[];
  tails: { tails: number; sessions: number; p50Ms: number; p99Ms: number; delivered: string; beforeAck: number; rssMiB: number }[];
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
    };
  });

  const catchUpEventsPerSecond = round(median(reps.flatMap((r) => r.catchUp.map((c) => c.eventsPerSecond))), 0);
  return { append, window, list, tails, catchUpEventsPerSecond, targets: targets(results.plan, append, window, list) };
}

function targets(plan: Plan, append: AppendSummary[], window: Summary["window"], list: Summary["list"]): Target[] {
  const out: Target[] = [];
  const top = Math.max(...plan.appendWriters);
  const at = (system: System) => append.find((a) => a.system === system && a.writers === top && !a.hot)?.throughput;
  const ours = at("sessionstore");
  const adk = at("adk");
  const ceilings = (["ceiling-pgbench", "ceiling-node-pg"] as System[])
    .map((s) => ({ s, v: at(s) }))
    .filter((c): c is { s: System; v: number } => c.v !== undefined);
  const ceiling = ceilings.sort((a, b) => b.v - a.v)[0];
  const vsAdk = ratio(ours, adk);
  out.push({
    name: `Append throughput, ${top} writers, vs ADK`,
    goal: "≥ 10×",
    measured: Number.isFinite(vsAdk) ? `${vsAdk.toFixed(1)}× (${fmt(ours)} vs ${fmt(adk)} appends/s)` : "ADK not run",
    met: Number.isFinite(vsAdk) ? vsAdk >= 10 : undefined,
  });
  const vsCeiling = ratio(ours, ceiling?.v);
  out.push({
    name: `Append throughput, ${top} writers, vs the ceiling`,
    goal: "≥ 0.5× (of the faster ceiling)",
    measured: Number.isFinite(vsCeiling)
      ? `${vsCeiling.toFixed(2)}× (${fmt(ours)} vs ${fmt(ceiling?.v)} appends/s, ${ceiling?.s})`
      : "ceiling not run",
    met: Number.isFinite(vsCeiling) ? vsCeiling >= 0.5 : undefined,
  });
  const sizes = plan.historySizes;
  const small = window.find((w) => w.system === "sessionstore" && w.size === Math.min(...sizes));
  const large = window.find((w) => w.system === "sessionstore" && w.size === Math.max(...sizes));
  const flat = ratio(large?.p50Ms, small?.p50Ms);
  out.push({
    name: `Windowed read (20 most recent), ${fmt(Math.max(...sizes))} vs ${fmt(Math.min(...sizes))} events`,
    goal: "≤ 1.5× (median)",
    measured: Number.isFinite(flat) ? `${flat.toFixed(2)}× (${large?.p50Ms} ms vs ${small?.p50Ms} ms)` : "not run",
    met: Number.isFinite(flat) ? flat <= 1.5 : undefined,
  });
  const first = list.find((l) => l.system === "sessionstore" && l.page === "first");
  const deep = list.find((l) => l.system === "sessionstore" && l.page === "deep");
  const deepRatio = ratio(deep?.p50Ms, first?.p50Ms);
  out.push({
    name: "ListSessions, deep page vs first page",
    goal: "as fast (≤ 1.1× median, to allow for noise)",
    measured: Number.isFinite(deepRatio) ? `${deepRatio.toFixed(2)}× (${deep?.p50Ms} ms vs ${first?.p50Ms} ms)` : "not run",
    met: Number.isFinite(deepRatio) ? deepRatio <= 1.1 : undefined,
  });
  return out;
}

export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
