// `sessionstore import-adk`: moves an ADK DatabaseSessionService database
// into a running Sessionstore. Progress and the summary go to stderr.

import { parseArgs } from "node:util";
import { createSessionStoreClient } from "../../client/create-client.js";
import { AdkDatabase } from "./adk-database.js";
import { type ImportProgress, importAdk } from "./import.js";

export const IMPORT_ADK_USAGE = `usage: sessionstore import-adk --from <db_url> [--server <url>] [options]

Copies an ADK DatabaseSessionService database (either schema: pickled actions
or JSON event_data) into a running Sessionstore, through its API.

  --from <db_url>      postgresql://user:pass@host/db, sqlite:///path/to/file.db or a file path
  --server <url>       the Sessionstore to write to (default http://127.0.0.1:50051)
  --token <token>      bearer token (default: SESSIONSTORE_TOKEN); needs write access to the apps
  --app <name>         only this app's sessions and state
  --batch <n>          sessions and events read per query (default 500)
  --concurrency <n>    sessions written at once (default 8)
  --dry-run            read and convert everything, write nothing
  -h, --help           this text

Re-running imports nothing twice; after an interruption it continues.`;

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, not "${text}"`);
  return n;
}

function progressLine(p: ImportProgress): string {
  return `import-adk: ${p.sessionsDone}/${p.sessionsTotal} sessions, ${p.eventsDone}/${p.eventsTotal} events`;
}

/** Runs the command; the exit code (0 done, 1 failed, 2 bad usage). */
export async function runImportAdk(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (e) {
    process.stderr.write(`import-adk: ${(e as Error).message}\n${IMPORT_ADK_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stderr.write(`${IMPORT_ADK_USAGE}\n`);
    return 0;
  }
  let batch: number;
  let concurrency: number;
  try {
    if (!values.from) throw new Error("--from is required");
    batch = positiveInt("batch", values.batch, 500);
    concurrency = positiveInt("concurrency", values.concurrency, 8);
  } catch (e) {
    process.stderr.write(`import-adk: ${(e as Error).message}\n${IMPORT_ADK_USAGE}\n`);
    return 2;
  }

  const server = values.server ?? "http://127.0.0.1:50051";
  const token = values.token ?? env.SESSIONSTORE_TOKEN;
  let db: AdkDatabase | undefined;
  const tty = process.stderr.isTTY;
  let lastLine = 0;
  try {
    db = await AdkDatabase.open(values.from);
    const client = values["dry-run"] ? undefined : createSessionStoreClient(server, { token });
    process.stderr.write(
      `import-adk: ADK schema ${db.schema === "0" ? "v0 (pickled actions)" : "v1 (JSON event_data)"} on ${db.dialect}${values["dry-run"] ? ", dry run" : ` -> ${server}`}\n`,
    );
    const summary = await importAdk(db, client, {
      app: values.app,
      batch,
      concurrency,
      dryRun: values["dry-run"],
      onProgress(p) {
        const now = performance.now();
        if (now - lastLine < (tty ? 200 : 5000)) return;
        lastLine = now;
        process.stderr.write(tty ? `\r${progressLine(p)}\u001b[K` : `${progressLine(p)}\n`);
      },
    });
    if (tty) process.stderr.write("\r\u001b[K");
    const rate = summary.seconds > 0 ? Math.round(summary.events / summary.seconds) : 0;
    process.stderr.write(
      `import-adk: done in ${summary.seconds.toFixed(1)} s: ${summary.sessions} sessions (${summary.sessionsCreated} new), ` +
        `${summary.events} events (${summary.eventsWritten} written, ${summary.eventsAlreadyThere} already there), ` +
        `${summary.appStates} app states, ${summary.userStates} user states; ${rate} events/s\n`,
    );
    return 0;
  } catch (e) {
    if (tty) process.stderr.write("\n");
    process.stderr.write(`import-adk: failed: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await db?.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      from: { type: "string" },
      server: { type: "string" },
      token: { type: "string" },
      app: { type: "string" },
      batch: { type: "string" },
      concurrency: { type: "string" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}
