import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.js";

// The embedded store's folder is held by one live server at a time, and by
// no dead one: a server killed with SIGKILL is a zombie until its parent
// reaps it (for good, in a container whose init never reaps), and a restart
// must not wait for that.

const children = new Set<ChildProcess>();
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      continue;
    }
    await gone;
  }
  children.clear();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sessionstore-lock-"));
  dirs.push(dir);
  return dir;
}

/**
 * A server on `dataDir`, started by a shell that then becomes `sleep`, which
 * never reaps: killed, the server stays a zombie for as long as the test
 * wants. Resolves with the server's pid once it listens.
 */
async function serverUnderNonReapingParent(dataDir: string): Promise<number> {
  const script = `node --import tsx src/main.ts --port 0 --data-dir "$1" & echo "$!"; exec sleep 600`;
  const child = spawn("sh", ["-c", script, "sh", dataDir], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", SESSIONSTORE_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.add(child);
  let out = "";
  let err = "";
  return new Promise<number>((resolve, reject) => {
    const check = () => {
      const pid = Number(out.split("\n")[0]);
      if (out.includes("\n") && err.includes('"sessionstore listening"')) resolve(pid);
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      check();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes("sessionstore failed to start")) reject(new Error(err));
      check();
    });
    child.once("exit", () => reject(new Error(`the shell exited before the server listened:\n${err}`)));
  });
}

/** The process's state letter from /proc (R, S, Z, ...), or undefined once it is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name in parentheses may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Threads still in the process: a killed process's main thread is a zombie before its other threads are gone. */
function threads(pid: number): number | undefined {
  try {
    const match = /^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

// Generous limits: each test starts real servers (tsx, then PGlite) on a shared machine.
describe.skipIf(process.platform !== "linux")("the embedded store's lock", () => {
  it("refuses a second live server, naming the first; a killed one that is still a zombie holds nothing", async () => {
    const dir = tempDir();
    const pid = await serverUnderNonReapingParent(dir);
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(`the embedded store at ${dir} is in use by process ${pid}`);

    process.kill(pid, "SIGKILL");
    // Dead: only its zombie main thread is left (the others have closed its files on their way out).
    await until(() => processState(pid) === "Z" && threads(pid) === 1);
    // Restarted at once, while the dead owner is a zombie with the same pid.
    const restarted = await openDatabase({ dataDir: dir });
    expect(processState(pid)).toBe("Z");
    await restarted.close();
  }, 180_000);

  it("lets only one of two servers that start at the same moment have the folder", async () => {
    const dir = tempDir();
    const results = await Promise.allSettled([serverUnderNonReapingParent(dir), serverUnderNonReapingParent(dir)]);
    const started = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(started).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(String(refused?.reason)).toContain(`the embedded store at ${dir} is in use by process ${started[0]}`);
  }, 180_000);
});
