import type { OptionSet } from "./options.js";

/** Where a command reads and writes; tests pass their own streams. */
export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM (long-running commands stop cleanly). */
  signal: AbortSignal;
}

/**
 * One entry of `sessionstore <command>`. A command is one file in
 * src/cli/commands/ and one entry in its index.ts; `run` answers an exit code
 * (0 ok, 1 failure) and throws UsageError for a wrong invocation (2).
 */
export interface Command {
  name: string;
  /** One line for `sessionstore --help`. */
  summary: string;
  /** Its options, for tools that list them (the README table reads serve's). */
  options?: OptionSet;
  run(argv: string[], io: CliIO): Promise<number>;
}

/** A command with subcommands (`sessions ls|get|rm`): each is a Command of its own. */
export function withSubcommands(name: string, summary: string, subcommands: Command[]): Command {
  const list = () => subcommands.map((c) => `  ${name} ${c.name.padEnd(8)} ${c.summary}`).join("\n");
  return {
    name,
    summary,
    async run(argv, io) {
      const [sub, ...rest] = argv;
      if (sub === undefined || sub === "--help" || sub === "-h") {
        io[sub === undefined ? "stderr" : "stdout"].write(`usage: sessionstore ${name} <subcommand> [options]\n\n${list()}\n`);
        return sub === undefined ? 2 : 0;
      }
      const command = subcommands.find((c) => c.name === sub);
      if (!command) {
        io.stderr.write(`sessionstore ${name}: unknown subcommand "${sub}"\n\n${list()}\n`);
        return 2;
      }
      return command.run(rest, io);
    },
  };
}
