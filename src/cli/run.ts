import { Code, ConnectError } from "@connectrpc/connect";
import type { CliIO } from "./command.js";
import { type CommandEntry, commands } from "./commands/index.js";
import { UsageError } from "./options.js";

export function overview(list: CommandEntry[] = commands): string {
  const width = Math.max(...list.map((c) => c.name.length)) + 2;
  return `usage: sessionstore <command> [options]     (no command: serve)

commands:
${list.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join("\n")}

Run 'sessionstore <command> --help' for a command's options.
Exit codes: 0 ok, 1 failure, 2 wrong usage.
`;
}

/** Runs one invocation and answers its exit code; never exits the process. */
export async function runCli(given: string[], io: CliIO, list: CommandEntry[] = commands): Promise<number> {
  // `npx ./sessionstore-0.1.0.tgz sessionstore --help` hands the bin its own name first.
  const argv = given[0] === "sessionstore" ? given.slice(1) : given;
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    io.stdout.write(overview(list));
    return 0;
  }
  // `sessionstore --port 8080` (and the bare `sessionstore`) serve, as before there were commands.
  const [name, args] = first === undefined || first.startsWith("-") ? ["serve", argv] : [first, rest];
  const entry = list.find((c) => c.name === name);
  if (!entry) {
    io.stderr.write(`sessionstore: unknown command "${name}"\n\n${overview(list)}`);
    return 2;
  }
  try {
    return await (await entry.load()).run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`sessionstore ${name}: ${err.message}\nRun 'sessionstore ${name} --help' for its options.\n`);
      return 2;
    }
    io.stderr.write(`sessionstore ${name}: ${describeError(err)}\n`);
    return 1;
  }
}

/** A failure in plain words: what the server said, or why it could not be asked. */
export function describeError(err: unknown): string {
  if (err instanceof ConnectError) {
    switch (err.code) {
      case Code.Unavailable:
        return `the server is unavailable (${err.rawMessage}); is it running at that address?`;
      case Code.Unauthenticated:
        return `the server wants a valid token (${err.rawMessage}): pass --token or set SESSIONSTORE_TOKEN`;
      case Code.PermissionDenied:
        return `the token may not do this (${err.rawMessage})`;
      case Code.DeadlineExceeded:
        return `the server did not answer in time (${err.rawMessage})`;
      default:
        return `${Code[err.code]}: ${err.rawMessage}`;
    }
  }
  return err instanceof Error ? err.message : String(err);
}
