import { runCli } from "./run.js";

/** Runs the command line in this process: signals abort the command, its answer is the exit code. */
export function runAsProcess(argv: string[]): void {
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    // A second signal means now: in-flight work is cut.
    if (signals > 1) process.exit(signal === "SIGINT" ? 130 : 143);
    stop.abort(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  runCli(argv, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, signal: stop.signal }).then(
    (code) => {
      process.exitCode = code;
      // Servers, pools and tails are closed by the command; what is left (a
      // stdin listener, a keep-alive socket) must not keep the process alive.
      // Exit once what was written has reached the pipes.
      process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
    },
    (err: unknown) => {
      process.stderr.write(`sessionstore: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
