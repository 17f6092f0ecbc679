import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

/** CPU time and memory of one process, from /proc (Linux). */
export interface ProcSample {
  /** user + system CPU seconds since the process started. */
  cpuSeconds: number;
  /** Resident set size now, in MiB. */
  rssMiB: number;
  /** Peak resident set size, in MiB. */
  hwmMiB: number;
}

let clockTicks: number | undefined;

function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

export function sampleProcess(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at ") ".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 here.
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { cpuSeconds: ticks / ticksPerSecond(), rssMiB: kib("VmRSS") / 1024, hwmMiB: kib("VmHWM") / 1024 };
}

export interface ServerOptions {
  root: string;
  databaseUrl: string;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** Extra environment (pool size, log level). */
  env?: Record<string, string>;
}

export interface BenchServer {
  url: string;
  pid: number;
  /** Lines the server logged at warn or error while the bench ran. */
  problems: string[];
  stop(): Promise<void>;
}

/**
 * Starts `src/main.ts` as its own process: the same as `tsx src/main.ts`,
 * but launched as `node --import tsx` so the pid is the server itself (the
 * tsx CLI would put a wrapper process in between) and node flags such as
 * --cpu-prof reach it.
 */
export async function startServer(options: ServerOptions): Promise<BenchServer> {
  const child = spawn(process.execPath, ["--import", "tsx", ...(options.nodeFlags ?? []), "src/main.ts", "--port", "0"], {
    cwd: options.root,
    env: { ...process.env, ...options.env, DATABASE_URL: options.databaseUrl, SESSIONSTORE_HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const problems: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start in 60 s")), 60_000);
    const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      let record: { msg?: string; url?: string; level?: string } | undefined;
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        problems.push(line);
        return;
      }
      if (record?.msg === "sessionstore listening" && record.url) {
        clearTimeout(timer);
        resolve(record.url);
      } else if ((record?.level === "warn" || record?.level === "error") && !record.msg?.startsWith("no tokens configured")) {
        if (problems.length < 50) problems.push(line);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${problems.join("\n")}`));
    });
  });
  return {
    url,
    pid: child.pid as number,
    problems,
    stop: () => stopChild(child),
  };
}

export function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
