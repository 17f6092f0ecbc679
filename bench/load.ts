// Shared by the workloads: the event every writer appends, and a closed-loop
// driver (each writer waits for its call to finish before the next one).

import { performance } from "node:perf_hooks";
import { type LatencySummary, round, summarize } from "./stats.js";

/** About the size of one chat turn: the same text goes into every system's events. */
export const TURN_TEXT =
  "Where is my order? It was supposed to arrive on Tuesday and the tracking page has not changed since Monday morning.";

export interface LoopResult {
  ops: number;
  errors: number;
  firstError?: string | undefined;
  seconds: number;
  throughput: number;
  latency: LatencySummary;
}

/**
 * Runs `writers` loops for `seconds`; each loop calls `op(writer, n)` and
 * waits for it. No new call starts after the deadline; the elapsed time
 * runs until the last call in flight returns.
 */
export async function closedLoop(
  writers: number,
  seconds: number,
  op: (writer: number, n: number) => Promise<void>,
  start = 0,
): Promise<LoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      let n = start;
      while (performance.now() < deadline) {
        const began = performance.now();
        try {
          await op(w, n++);
          latencies.push(performance.now() - began);
        } catch (err) {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
          if (errors > 100) throw new Error(`too many errors, first: ${firstError}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return {
    ops: latencies.length,
    errors,
    firstError,
    seconds: round(elapsed),
    throughput: round(latencies.length / elapsed, 1),
    latency: summarize(latencies),
  };
}

/** Sequential calls: `warmup` unmeasured, then `iterations` timed. */
export async function sequential(warmup: number, iterations: number, op: () => Promise<void>): Promise<LatencySummary> {
  for (let i = 0; i < warmup; i++) await op();
  const latencies: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const began = performance.now();
    await op();
    latencies.push(performance.now() - began);
  }
  return summarize(latencies);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
