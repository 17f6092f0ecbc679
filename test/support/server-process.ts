import { type ChildProcess, spawn } from "node:child_process";

// The server as its own process (`src/main.ts` through tsx), for tests that
// take its database away or watch it die: resolves once it logs where it
// listens.

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything it wrote to stderr so far (its JSON log). */
  log(): string;
  /** Throws, with the log's tail, when the process has ended. */
  assertAlive(): void;
  kill(): void;
}

export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn("node_modules/.bin/tsx", ["src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", SESSIONSTORE_HOST: "127.0.0.1", SESSIONSTORE_PORT: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let log = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      const listening = /"msg":"sessionstore listening","url":"([^"]+)"/.exec(log);
      if (listening?.[1]) resolve(listening[1]);
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) at start:\n${log}`)));
  });
  return {
    child,
    url,
    log: () => log,
    assertAlive() {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server died:\n${log.slice(-4000)}`);
    },
    kill() {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    },
  };
}
