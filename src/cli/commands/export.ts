import { once } from "node:events";
import { createWriteStream, truncateSync } from "node:fs";
import { databaseOptions } from "../../config/config.js";
import { appStates, sessions, userStates } from "../../storage/dump.js";
import type { Command } from "../command.js";
import { openStore } from "../database.js";
import { parseOptions, text, toggle, UsageError } from "../options.js";
import {
  appStateRecord,
  type ExportRecord,
  eventRecord,
  FORMAT,
  line,
  progress,
  resumePoint,
  sessionRecord,
  type Totals,
  userStateRecord,
  VERSION,
} from "../transfer.js";
import { helpOut } from "./sessions.js";

const options = {
  ...databaseOptions,
  output: text("output", "write to this file (default: stdout)", { short: "o", valueName: "FILE" }),
  resume: toggle("resume", "continue an interrupted export into --output: keep its complete records, write the rest"),
  app: text("app", "only this app", { short: "a", valueName: "APP" }),
  user: text("user", "only this user (with --app); app state is left out", { short: "u", valueName: "USER" }),
};

export const exportCommand: Command = {
  name: "export",
  summary: "write the store (sessions with every event, app and user state) as JSON Lines",
  options,
  async run(argv, io) {
    const { values, help } = parseOptions(options, argv, io.env);
    if (help)
      return helpOut(
        io,
        "export [--output FILE [--resume]] [--app APP [--user USER]] [--database-url URL | --data-dir DIR]",
        this,
        options,
      );
    if (values.resume && !values.output) throw new UsageError("--resume needs --output FILE");
    if (values.user !== undefined && values.app === undefined) throw new UsageError("--user needs --app");
    const scope = { ...(values.app !== undefined ? { app: values.app } : {}), ...(values.user !== undefined ? { user: values.user } : {}) };
    const point = values.resume && values.output ? await resumePoint(values.output) : undefined;
    if (point?.complete) {
      io.stderr.write(`${values.output} is already a complete export\n`);
      return 0;
    }
    const store = await openStore(values);
    let out: NodeJS.WritableStream;
    if (values.output) {
      if (point) truncateSync(values.output, point.offset);
      out = createWriteStream(values.output, { flags: point ? "a" : "w" });
    } else out = io.stdout;
    const write = async (record: ExportRecord) => {
      if (!out.write(line(record))) await once(out, "drain");
    };
    const totals: Totals = point ? { ...point.totals } : { appStates: 0, userStates: 0, sessions: 0, events: 0 };
    const bar = progress(io.stderr, "exported");
    try {
      // One snapshot: a session's count of events and its events agree even while servers write.
      await store.db
        .transaction()
        .setIsolationLevel("repeatable read")
        .execute(async (trx) => {
          const after = point?.position ?? { kind: "start" as const };
          if (!point?.hasHeader)
            await write({ kind: "header", format: FORMAT, version: VERSION, exportedAt: new Date().toISOString(), scope });
          for await (const row of appStates(trx, scope, after)) {
            await write(appStateRecord(row));
            totals.appStates++;
          }
          for await (const row of userStates(trx, scope, after)) {
            await write(userStateRecord(row));
            totals.userStates++;
          }
          for await (const { session, events } of sessions(trx, scope, after)) {
            if (io.signal.aborted) throw new Error("interrupted; continue with --resume");
            await write(sessionRecord(session));
            for await (const event of events()) {
              await write(eventRecord(event));
              totals.events++;
            }
            totals.sessions++;
            bar.update(totals);
          }
          await write({ kind: "end", ...totals });
        });
    } finally {
      if (out !== io.stdout) {
        out.end();
        await once(out, "close");
      }
      await store.close();
    }
    bar.done(totals, values.output ? ` to ${values.output}` : "");
    return 0;
  },
};
