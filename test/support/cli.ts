import { PassThrough, Readable } from "node:stream";
import type { CliIO } from "../../src/cli/command.js";
import { runCli } from "../../src/cli/run.js";

export interface CliRun {
  code: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout holds a line matching `pattern`. */
  waitFor(pattern: RegExp): Promise<void>;
  /** Like SIGINT: the command stops and answers its code. */
  stop(): void;
}

/** Runs `sessionstore ARGS` in this process with its own streams and environment (no SESSIONSTORE_* from the test's). */
export function startCli(argv: string[], env: NodeJS.ProcessEnv = {}, stdin: NodeJS.ReadableStream = Readable.from([])): CliRun {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = "";
  let stderr = "";
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.pattern.test(stdout)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  out.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    check();
  });
  err.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stop = new AbortController();
  const io: CliIO = { stdout: out, stderr: err, stdin, env: { PATH: process.env.PATH, ...env }, signal: stop.signal };
  const code = runCli(argv, io);
  return {
    code,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ pattern, resolve });
        check();
        code.then(() => {
          if (!pattern.test(stdout)) reject(new Error(`the command ended without printing ${pattern}:\n${stdout}\n${stderr}`));
        }, reject);
      }),
    stop: () => stop.abort("SIGINT"),
  };
}

/** Runs `sessionstore ARGS` to its end. */
export async function cli(argv: string[], env: NodeJS.ProcessEnv = {}, stdin?: NodeJS.ReadableStream) {
  const run = startCli(argv, env, stdin);
  const code = await run.code;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
