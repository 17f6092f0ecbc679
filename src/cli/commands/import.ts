import { createReadStream, existsSync } from "node:fs";
import type { Kysely } from "kysely";
import { databaseOptions } from "../../config/config.js";
import { type EventRow, putAppState, putSession, putUserState } from "../../storage/dump.js";
import { migrateToLatest } from "../../storage/migrate.js";
import type { Command } from "../command.js";
import { openStore } from "../database.js";
import { parseOptions, text, UsageError } from "../options.js";
import { eventRow, FORMAT, FormatError, progress, readRecords, type Totals, VERSION } from "../transfer.js";
import { helpOut } from "./sessions.js";

const options = {
  ...databaseOptions,
  input: text("input", "read this export file (default: stdin; also the first argument)", { short: "i", valueName: "FILE" }),
};

export const importCommand: Command = {
  name: "import",
  summary: "load an export into the store; what exists is skipped, so a repeat resumes",
  options,
  async run(argv, io) {
    const { values, help, positionals } = parseOptions(options, argv, io.env, { positionals: true });
    if (help) return helpOut(io, "import [FILE | --input FILE] [--database-url URL | --data-dir DIR]", this, options);
    if (positionals.length > 1 || (positionals.length === 1 && values.input)) throw new UsageError("give one input file");
    const path = values.input ?? positionals[0];
    if (path && path !== "-" && !existsSync(path)) throw new UsageError(`no such file: ${path}`);
    const input = path && path !== "-" ? createReadStream(path) : io.stdin;
    const records = readRecords(input);
    const next = async () => (await records.next()).value;
    // The header first: a file that is not an export touches no database.
    const first = await next();
    if (first?.record.kind !== "header" || first.record.format !== FORMAT)
      throw new FormatError("this is not a sessionstore export (no header line)");
    if (first.record.version !== VERSION)
      throw new FormatError(`export format version ${first.record.version} is not known to this version (${VERSION})`);
    const store = await openStore(values);
    const written: Totals = { appStates: 0, userStates: 0, sessions: 0, events: 0 };
    const seen: Totals = { appStates: 0, userStates: 0, sessions: 0, events: 0 };
    const bar = progress(io.stderr, "imported");
    try {
      // Same schema as a server would use.
      await migrateToLatest(store.db as Kysely<unknown>);
      let ended = false;
      for (;;) {
        const item = await next();
        if (!item) break;
        const { record, lineNo } = item;
        if (ended) throw new FormatError(`line ${lineNo}: records after the end record`);
        switch (record.kind) {
          case "app_state":
            seen.appStates++;
            if (await putAppState(store.db, { app: record.app, state: record.state, updateTimeNs: BigInt(record.updateTimeNs) }))
              written.appStates++;
            break;
          case "user_state":
            seen.userStates++;
            if (
              await putUserState(store.db, {
                app: record.app,
                user: record.user,
                state: record.state,
                updateTimeNs: BigInt(record.updateTimeNs),
              })
            )
              written.userStates++;
            break;
          case "session": {
            const expected = record.events;
            const where = `session ${record.app}/${record.user}/${record.id} (line ${lineNo})`;
            async function* events(): AsyncGenerator<EventRow> {
              for (let i = 0; i < expected; i++) {
                const e = await next();
                if (!e) throw new FormatError(`${where}: the file ends after ${i} of its ${expected} events (an interrupted export?)`);
                if (e.record.kind !== "event")
                  throw new FormatError(`line ${e.lineNo}: ${where} should have ${expected} events, found ${i}`);
                seen.events++;
                yield eventRow(e.record);
              }
            }
            const before = seen.events;
            const stored = await putSession(
              store.db,
              {
                app: record.app,
                user: record.user,
                id: record.id,
                state: record.state,
                revision: BigInt(record.revision),
                createTimeNs: BigInt(record.createTimeNs),
                updateTimeNs: BigInt(record.updateTimeNs),
                initialState: record.initialState,
                forkedFrom: record.forkedFrom ? { sessionId: record.forkedFrom.sessionId, seq: BigInt(record.forkedFrom.seq) } : null,
              },
              events(),
            );
            seen.sessions++;
            if (stored) {
              written.sessions++;
              written.events += seen.events - before;
            }
            bar.update(written);
            break;
          }
          case "end":
            ended = true;
            if (record.sessions !== seen.sessions || record.events !== seen.events)
              throw new FormatError(
                `line ${lineNo}: the end record counts ${record.sessions} sessions and ${record.events} events, the file holds ${seen.sessions} and ${seen.events}`,
              );
            break;
          default:
            throw new FormatError(`line ${lineNo}: unexpected ${record.kind} record`);
        }
      }
      if (!ended)
        throw new FormatError(
          "the file ends without its end record (an interrupted export? complete it with export --resume); everything before was imported",
        );
    } finally {
      await store.close();
    }
    const skipped = seen.sessions - written.sessions;
    bar.done(written, skipped > 0 ? `; ${skipped} sessions were already there and were skipped` : "");
    return 0;
  },
};
