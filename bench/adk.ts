// Drives bench/adk_peer.py (google-adk's DatabaseSessionService) over
// JSON lines on its stdin and stdout, in a venv of its own (bench/.venv).

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import type { TurnRun } from "./scale.js";
import { stopChild } from "./server.js";
import type { AppendRun } from "./sessionstore.js";
import { round, summarize } from "./stats.js";

/** Creates bench/.venv and installs bench/requirements.txt when the venv is missing or lacks them. */
export function ensureVenv(root: string, log: (msg: string) => void): string {
  const venv = join(root, "bench", ".venv");
  const python = join(venv, "bin", "python");
  const ready = () => {
    try {
      execFileSync(python, ["-c", "import asyncpg, sqlalchemy.ext.asyncio, greenlet, google.adk.sessions.database_session_service"], {
        stdio: "ignore",
      });
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(python) && ready()) return python;
  log("setting up bench/.venv (google-adk, asyncpg, SQLAlchemy)");
  if (!existsSync(python)) execFileSync(process.env.PYTHON ?? "python3", ["-m", "venv", venv], { stdio: "inherit" });
  execFileSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", join(root, "bench", "requirements.txt")], {
    stdio: "inherit",
  });
  if (!ready()) throw new Error("bench/.venv: google-adk, asyncpg or SQLAlchemy still not importable");
  return python;
}

interface Reply {
  ok: boolean;
  error?: string;
  trace?: string;
  [key: string]: unknown;
}

export class AdkPeer {
  readonly #child: ChildProcess;
  readonly #lines: Interface;
  readonly #pending: ((line: string) => void)[] = [];
  readonly #stderr: string[] = [];
  readonly versions: Promise<{ adk: string; python: string }>;

  constructor(python: string, root: string, databaseUrl: string, poolSize: number) {
    this.#child = spawn(python, [join(root, "bench", "adk_peer.py"), databaseUrl, String(poolSize)], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    this.#child.stderr?.on("data", (d: Buffer) => {
      this.#stderr.push(d.toString());
      if (this.#stderr.length > 200) this.#stderr.shift();
    });
    this.#lines = createInterface({ input: this.#child.stdout as NodeJS.ReadableStream });
    this.#lines.on("line", (line) => this.#pending.shift()?.(line));
    this.versions = this.#next().then((line) => JSON.parse(line) as { adk: string; python: string });
  }

  #next(): Promise<string> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`ADK peer exited with ${code}: ${this.#stderr.join("").slice(-3000)}`));
      this.#child.once("exit", onExit);
      this.#pending.push((line) => {
        this.#child.off("exit", onExit);
        resolve(line);
      });
    });
  }

  async call(cmd: string, args: Record<string, unknown> = {}): Promise<Reply> {
    await this.versions;
    const reply = this.#next();
    this.#child.stdin?.write(`${JSON.stringify({ cmd, ...args })}\n`);
    const parsed = JSON.parse(await reply) as Reply;
    if (!parsed.ok) throw new Error(`ADK peer ${cmd}: ${parsed.error}\n${parsed.trace ?? ""}`);
    return parsed;
  }

  async init(): Promise<void> {
    await this.call("init");
  }

  async append(tag: string, writers: number, hot: boolean, warmup: number, seconds: number): Promise<AppendRun> {
    const r = await this.call("append", { tag, writers, hot, warmup, seconds });
    const latencies = r.latenciesMs as number[];
    const elapsed = r.seconds as number;
    return {
      ops: latencies.length,
      errors: 0,
      seconds: round(elapsed),
      throughput: round(latencies.length / elapsed, 1),
      latency: summarize(latencies),
      writers,
      hot,
      cpuSecondsPer10k: latencies.length ? round(((r.cpuSeconds as number) / latencies.length) * 10_000, 2) : Number.NaN,
      rssMiB: round(r.rssMiB as number, 1),
      hwmMiB: round(r.hwmMiB as number, 1),
    };
  }

  /** GetSession (window 20) + 3 appends per turn, `concurrency` sessions at once (bench/scale.ts has ours). */
  async turn(tag: string, concurrency: number, warmup: number, seconds: number): Promise<TurnRun> {
    const r = await this.call("turn", { tag, concurrency, warmup, seconds });
    const latencies = r.latenciesMs as number[];
    const elapsed = r.seconds as number;
    return {
      ops: latencies.length,
      errors: 0,
      seconds: round(elapsed),
      throughput: round(latencies.length / elapsed, 1),
      latency: summarize(latencies),
      concurrency,
      cpuMsPerTurn: latencies.length ? round(((r.cpuSeconds as number) / latencies.length) * 1000, 3) : Number.NaN,
    };
  }

  async loadHistory(size: number): Promise<{ sessionId: string; loadSeconds: number }> {
    const r = await this.call("load_history", { size });
    return { sessionId: r.sessionId as string, loadSeconds: round(r.loadSeconds as number, 1) };
  }

  async window(sessionId: string, size: number, warmup: number, iterations: number) {
    const r = await this.call("get_window", { session_id: sessionId, size, warmup, iterations });
    return summarize(r.latenciesMs as number[]);
  }

  async loadSessions(count: number): Promise<number> {
    const r = await this.call("load_sessions", { count });
    return round(r.loadSeconds as number, 1);
  }

  async list(count: number, warmup: number, iterations: number) {
    const r = await this.call("list", { count, warmup, iterations });
    return summarize(r.latenciesMs as number[]);
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.stdin?.end(`${JSON.stringify({ cmd: "quit" })}\n`);
    const timer = setTimeout(() => void stopChild(child, 10_000), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
