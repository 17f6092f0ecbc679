import { ListEventsRequest_Order } from "../../../gen/ts/sessionstore/v1/session_service_pb.js";
import { clientOptions, connect, jsonOption, required, scopeOptions } from "../client.js";
import { type Command, withSubcommands } from "../command.js";
import { optionalInteger, parseOptions, toggle } from "../options.js";
import { eventJson, eventLine, paintFor } from "../render.js";
import { helpOut } from "./sessions.js";

const lsOptions = {
  ...clientOptions,
  ...scopeOptions,
  limit: optionalInteger("limit", 1, Number.MAX_SAFE_INTEGER, "at most this many events (default: all)"),
  reverse: toggle("reverse", "newest first"),
  ...jsonOption,
};

const ls: Command = {
  name: "ls",
  summary: "list a session's events, oldest first",
  options: lsOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(lsOptions, argv, io.env);
    if (help) return helpOut(io, "events ls --app APP --user USER --session ID", this, lsOptions);
    const key = {
      appName: required(values.app, "--app"),
      userId: required(values.user, "--user"),
      sessionId: required(values.session, "--session"),
    };
    const client = connect(values);
    const paint = paintFor(io.stdout, io.env);
    const order = values.reverse ? ListEventsRequest_Order.DESCENDING : ListEventsRequest_Order.ASCENDING;
    let pageToken = "";
    let shown = 0;
    do {
      const page = await client.listEvents({ ...key, pageSize: 1000, pageToken, order }, { signal: io.signal });
      for (const event of page.events) {
        if (values.limit !== undefined && shown >= values.limit) return 0;
        shown++;
        io.stdout.write(values.json ? `${JSON.stringify(eventJson(event))}\n` : `${eventLine(event, paint)}\n`);
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
    return 0;
  },
};

export const events = withSubcommands("events", "list a session's events (ls)", [ls]);
