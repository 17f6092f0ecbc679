// The BENCHMARKS.md section of issue 13's workloads (bench/scale.ts).

import { ms, table, times } from "./markdown.js";
import { fmt, type Results } from "./results.js";
import type { TurnRun } from "./scale.js";
import { ratio } from "./stats.js";

/** Markdown lines; none when the run had none of these workloads. */
export function renderScale(results: Results): string[] {
  const scale = results.scale;
  if (!scale) return [];
  const out: string[] = ["## 6. Agent turns, reads across sessions, tails at scale, one PostgreSQL", ""];
  out.push(
    "Each measured once per run (not per repetition), after the repetitions above. Workloads in `bench/scale.ts`; sizes in `fullScale` there.",
    "",
  );

  if (scale.turn.length > 0) {
    out.push("### A whole agent turn");
    out.push("");
    out.push(
      "`GetSession` (20 most recent events), then three appends, each with the revision the previous call returned (`expected_revision`; ADK: `append_event` on the session object `get_session` returned, which ADK refuses when storage is newer). Each concurrent turn on its own session. CPU: the server's (ours) or the whole Python process's (ADK), per turn.",
    );
    out.push("");
    const levels = [...new Set(scale.turn.map((t) => t.run.concurrency))];
    const of = (system: "sessionstore" | "adk", c: number): TurnRun | undefined =>
      scale.turn.find((t) => t.system === system && t.run.concurrency === c)?.run;
    out.push(
      table(
        [
          "concurrent turns",
          "sessionstore turns/s",
          "p50 / p99 ms",
          "CPU ms/turn",
          "ADK turns/s",
          "ADK p50 / p99 ms",
          "ADK CPU ms/turn",
          "sessionstore / ADK (turns/s)",
        ],
        levels.map((c) => {
          const ours = of("sessionstore", c);
          const adk = of("adk", c);
          return [
            String(c),
            ours ? fmt(ours.throughput) : "–",
            ours ? `${ms(ours.latency.p50Ms)} / ${ms(ours.latency.p99Ms)}` : "–",
            ours ? ms(ours.cpuMsPerTurn) : "–",
            adk ? fmt(adk.throughput) : "–",
            adk ? `${ms(adk.latency.p50Ms)} / ${ms(adk.latency.p99Ms)}` : "–",
            adk ? ms(adk.cpuMsPerTurn) : "–",
            times(ratio(ours?.throughput, adk?.throughput)),
          ];
        }),
      ),
    );
    out.push("");
  }

  if (scale.cold) {
    const c = scale.cold;
    out.push(
      `### GetSession across ${fmt(c.sessions)} sessions`,
      "",
      `\`GetSession\` (20 most recent of ${fmt(c.eventsEach)} events) of a different session each call, in random order, one at a time: p50 **${ms(c.latency.p50Ms)} ms**, p99 ${ms(c.latency.p99Ms)} ms, ${ms(c.cpuMsPerCall)} ms of server CPU per call (the hot-session figures are in section 2).`,
      "",
    );
  }

  if (scale.manyTails) {
    const t = scale.manyTails;
    out.push(
      "### Tails at scale",
      "",
      `${fmt(t.tails)} \`StreamEvents\` tails, one per session, then ${fmt(t.appends)} appends round-robin across the sessions: ${fmt(t.deliveries)} of ${fmt(t.expected)} delivered, latency from the append's acknowledgement p50 **${ms(t.latency.p50Ms)} ms**, p99 **${ms(t.latency.p99Ms)} ms** (target ≤ 100 ms); the server's resident memory with every tail open **${fmt(t.serverRssMiB)} MiB** (target ≤ 1,024); opening and catching up all tails took ${t.openSeconds} s (in waves of 500); the server used ${t.serverCpuSeconds ?? "–"} s of CPU from the first append to the last delivery; its own feed lag (commit to hand-over, from \`/metrics\`) p50 at most ${ms(t.serverLag?.p50UpToMs)} ms, p99 at most ${ms(t.serverLag?.p99UpToMs)} ms; the harness's event-loop delay p99 ${ms(t.harnessLoopDelay?.p99Ms)} ms.`,
      "",
    );
  }

  if (scale.big) {
    const b = scale.big;
    out.push(
      `### One session of ${fmt(b.events)} events`,
      "",
      "Calls one at a time, alternating with a session of 100 events on the same server:",
      "",
      table(
        ["", `${fmt(b.events)} events p50 / p99 ms`, "100 events p50 / p99 ms", "ratio (p50)"],
        [
          [
            "GetSession, 20 most recent",
            `${ms(b.windowBig.p50Ms)} / ${ms(b.windowBig.p99Ms)}`,
            `${ms(b.windowSmall.p50Ms)} / ${ms(b.windowSmall.p99Ms)}`,
            times(ratio(b.windowBig.p50Ms, b.windowSmall.p50Ms)),
          ],
          [
            "AppendEvent with expected_revision",
            `${ms(b.appendBig.p50Ms)} / ${ms(b.appendBig.p99Ms)}`,
            `${ms(b.appendSmall.p50Ms)} / ${ms(b.appendSmall.p99Ms)}`,
            times(ratio(b.appendBig.p50Ms, b.appendSmall.p50Ms)),
          ],
        ],
      ),
      "",
      `Size on disk: **${fmt(b.diskMiBPerMillion)} MiB per million events** (the events table's growth over the load, indexes and TOAST included; each event about one chat turn, ${TURN_BYTES_NOTE}).`,
      "",
    );
  }

  if (scale.replicas) {
    const r = scale.replicas;
    const t = r.acrossReplicas;
    out.push(
      "### Two server replicas on one PostgreSQL",
      "",
      table(
        ["appends with expected_revision", "appends/s", "p50 / p99 ms", "server CPU ms/append (both processes)"],
        [
          [
            "all writers through one server",
            fmt(r.oneServer.throughput),
            `${ms(r.oneServer.p50Ms)} / ${ms(r.oneServer.p99Ms)}`,
            ms(r.oneServer.cpuMsPerAppend),
          ],
          [
            "writers split over two servers",
            fmt(r.twoServers.throughput),
            `${ms(r.twoServers.p50Ms)} / ${ms(r.twoServers.p99Ms)}`,
            ms(r.twoServers.cpuMsPerAppend),
          ],
        ],
      ),
      "",
      `${fmt(t.tails)} tails on one replica, appends through the other (delivered after the other replica's \`NOTIFY\`): ${fmt(t.deliveries)} of ${fmt(t.expected)} delivered, p50 ${ms(t.latency.p50Ms)} ms, p99 ${ms(t.latency.p99Ms)} ms from acknowledgement. On this 2-core machine both servers and PostgreSQL share the same cores, so a second replica adds no CPU; see docs/scaling.md for what it is for.`,
      "",
    );
  }
  return out;
}

const TURN_BYTES_NOTE = "a user message of about 120 characters and a one-key state delta";
