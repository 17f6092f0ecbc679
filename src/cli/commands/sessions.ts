import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { SessionSchema } from "../../../gen/ts/sessionstore/v1/session_pb.js";
import { clientOptions, connect, jsonOption, required, scopeOptions } from "../client.js";
import { type Command, withSubcommands } from "../command.js";
import { optionalInteger, parseOptions, renderHelp, toggle } from "../options.js";
import { eventLine, paintFor } from "../render.js";

const lsOptions = {
  ...clientOptions,
  app: scopeOptions.app,
  user: { ...scopeOptions.user, description: "only this user's sessions (default: every user of the app)" },
  limit: optionalInteger("limit", 1, Number.MAX_SAFE_INTEGER, "at most this many sessions (default: all)"),
  newestFirst: toggle("newest-first", "most recently updated first (default: oldest first)"),
  ...jsonOption,
};

const ls: Command = {
  name: "ls",
  summary: "list an app's sessions (or one user's)",
  options: lsOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(lsOptions, argv, io.env);
    if (help) return helpOut(io, "sessions ls --app APP [--user USER]", this, lsOptions);
    const app = required(values.app, "--app");
    const client = connect(values);
    let pageToken = "";
    let shown = 0;
    if (!values.json)
      io.stdout.write(`${"SESSION".padEnd(36)}  ${"USER".padEnd(20)}  ${"EVENTS".padStart(6)}  UPDATED                   STATE KEYS\n`);
    do {
      const page = await client.listSessions(
        { appName: app, userId: values.user ?? "", pageSize: 1000, pageToken, newestFirst: values.newestFirst },
        { signal: io.signal },
      );
      for (const s of page.sessions) {
        if (values.limit !== undefined && shown >= values.limit) return 0;
        shown++;
        if (values.json) io.stdout.write(`${JSON.stringify(toJson(SessionSchema, s))}\n`);
        else {
          const updated = s.lastUpdateTime ? timestampDate(s.lastUpdateTime).toISOString() : "";
          const keys = Object.keys(s.state ?? {}).join(",");
          io.stdout.write(
            `${s.id.padEnd(36)}  ${s.userId.padEnd(20)}  ${String(s.revision).padStart(6)}  ${updated.padEnd(24)}  ${keys}\n`,
          );
        }
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
    return 0;
  },
};

const getOptions = {
  ...clientOptions,
  ...scopeOptions,
  events: optionalInteger("events", 0, 2_147_483_647, "only the N most recent events (default: all; 0: none)"),
  ...jsonOption,
};

const get: Command = {
  name: "get",
  summary: "show a session: state and events",
  options: getOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(getOptions, argv, io.env);
    if (help) return helpOut(io, "sessions get --app APP --user USER --session ID", this, getOptions);
    const key = {
      appName: required(values.app, "--app"),
      userId: required(values.user, "--user"),
      sessionId: required(values.session, "--session"),
    };
    const { session } = await connect(values).getSession(
      { ...key, ...(values.events !== undefined ? { numRecentEvents: values.events } : {}) },
      { signal: io.signal },
    );
    if (!session) return 1;
    if (values.json) {
      io.stdout.write(`${JSON.stringify(toJson(SessionSchema, session))}\n`);
      return 0;
    }
    const paint = paintFor(io.stdout, io.env);
    const created = session.createTime ? timestampDate(session.createTime).toISOString() : "?";
    const updated = session.lastUpdateTime ? timestampDate(session.lastUpdateTime).toISOString() : "?";
    io.stdout.write(`${paint.bold(`session ${session.id}`)} (app ${session.appName}, user ${session.userId})\n`);
    io.stdout.write(`created ${created}, updated ${updated}, ${session.revision} events\n`);
    if (session.forkedFrom) io.stdout.write(`forked from ${session.forkedFrom.sessionId} at #${session.forkedFrom.seq}\n`);
    io.stdout.write(`state ${JSON.stringify(session.state ?? {}, null, 2)}\n`);
    for (const event of session.events) io.stdout.write(`${eventLine(event, paint)}\n`);
    return 0;
  },
};

const rmOptions = { ...clientOptions, ...scopeOptions };

const rm: Command = {
  name: "rm",
  summary: "delete a session and its events",
  options: rmOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(rmOptions, argv, io.env);
    if (help) return helpOut(io, "sessions rm --app APP --user USER --session ID", this, rmOptions);
    const key = {
      appName: required(values.app, "--app"),
      userId: required(values.user, "--user"),
      sessionId: required(values.session, "--session"),
    };
    await connect(values).deleteSession(key, { signal: io.signal });
    io.stderr.write(`deleted session ${key.sessionId} (if it existed)\n`);
    return 0;
  },
};

export function helpOut(
  io: { stdout: NodeJS.WritableStream },
  usage: string,
  command: Command,
  options: Parameters<typeof renderHelp>[2],
): number {
  io.stdout.write(renderHelp(`usage: sessionstore ${usage}`, `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.`, options));
  return 0;
}

export const sessions = withSubcommands("sessions", "list, show and delete sessions (ls, get, rm)", [ls, get, rm]);
