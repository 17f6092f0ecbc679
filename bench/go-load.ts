// Append load from the Go client (clients/go/cmd/sessionstore-load): the
// harness's own Node.js process spends ~0.25 ms of CPU per call on the
// TypeScript client, about as much as the server spends on an append, and it
// shares the machine's cores with the server and PostgreSQL. The Go load
// generator costs a fraction of that, as pgbench does for the ceiling, so
// the figures measure the server rather than the load generator.

import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { sampleProcess } from "./server.js";
import type { AppendLoad, AppendRun, LoadedHistory } from "./sessionstore.js";
import { perTenThousand } from "./sessionstore.js";
import { type LatencySummary, round, summarize } from "./stats.js";

/** Builds the load generator into bench/.bin; returns its path. */
export function buildGoLoad(root: string): string {
  const dir = join(root, "bench", ".bin");
  mkdirSync(dir, { recursive: true });
  const out = join(dir, "sessionstore-load");
  execFileSync("go", ["build", "-o", out, "./cmd/sessionstore-load"], { cwd: join(root, "clients", "go"), stdio: "inherit" });
  return out;
}

export async function appendRunGo(
  binary: string,
  { url, serverPid, tag, writers, hot, warmupSeconds, seconds }: AppendLoad,
): Promise<AppendRun> {
  const args = ["--url", url, "--tag", tag, "--writers", String(writers), "--warmup", String(warmupSeconds), "--seconds", String(seconds)];
  if (hot) args.push("--hot");
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let before: ReturnType<typeof sampleProcess> | undefined;
  let after: ReturnType<typeof sampleProcess> | undefined;
  let json = "";
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    // Server CPU is sampled over the measured part only, as for the TypeScript driver.
    if (line === "measuring") before = sampleProcess(serverPid);
    else if (line === "measured") after = sampleProcess(serverPid);
    else json += line;
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0 || !before || !after) throw new Error(`sessionstore-load exited with ${code}: ${stderr.trim()}`);
  const r = JSON.parse(json) as {
    ops: number;
    errors: number;
    firstError?: string;
    seconds: number;
    throughput: number;
    latenciesMs: number[];
  };
  return {
    ops: r.ops,
    errors: r.errors,
    firstError: r.firstError,
    seconds: round(r.seconds),
    throughput: round(r.throughput, 1),
    latency: summarize(r.latenciesMs),
    writers,
    hot,
    ...perTenThousand(before, after, r.ops),
  };
}

/**
 * One read, one call at a time, through the Go client (`--read window`:
 * GetSession with the 20 most recent events; `--read newest`: ListEvents, a
 * page of the 20 newest), on a loaded history: the read's figures then
 * measure the server, not the TypeScript client's protobuf decoding.
 */
export async function readRunGo(
  binary: string,
  url: string,
  history: LoadedHistory,
  mode: "window" | "newest",
  warmup: number,
  iterations: number,
): Promise<LatencySummary> {
  const args = ["--url", url, "--read", mode, "--app", history.appName, "--user", history.userId, "--session", history.sessionId];
  args.push("--size", String(history.size), "--warmup-calls", String(warmup), "--calls", String(iterations));
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let json = "";
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    if (line !== "measuring" && line !== "measured") json += line;
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) throw new Error(`sessionstore-load --read ${mode} exited with ${code}: ${stderr.trim()}`);
  const r = JSON.parse(json) as { latenciesMs: number[] };
  return summarize(r.latenciesMs);
}
