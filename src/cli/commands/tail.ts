import { create, toJson } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { type StreamEventsRequest, StreamEventsResponseSchema } from "../../../gen/ts/sessionstore/v1/session_service_pb.js";
import { clientOptions, connect, jsonOption, required, scopeOptions } from "../client.js";
import type { Command } from "../command.js";
import { optionalInteger, parseOptions, text, toggle, UsageError } from "../options.js";
import { eventLine, paintFor } from "../render.js";
import { helpOut } from "./sessions.js";

const options = {
  ...clientOptions,
  app: scopeOptions.app,
  user: { ...scopeOptions.user, description: "only this user's sessions (default: every user of the app)" },
  session: { ...scopeOptions.session, description: "only this session (needs --user)" },
  fromStart: toggle("from-start", "stored history first, then live events (default: live events only)"),
  afterSeq: optionalInteger("after-seq", 0, Number.MAX_SAFE_INTEGER, "one session: events after this seq, then live"),
  cursor: text("cursor", "resume after this cursor (printed with every event by --json)", { valueName: "CURSOR" }),
  once: toggle("once", "stop once caught up with the stored events instead of following"),
  ...jsonOption,
};

/** Waits before reconnecting: 100 ms doubling to 5 s, with jitter. */
function backoff(attempt: number, signal: AbortSignal): Promise<void> {
  const ms = Math.min(5000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Failures after which the same tail continues from its cursor: the server went away or restarted. */
function resumable(err: unknown): boolean {
  const e = ConnectError.from(err);
  return (
    e.code === Code.Unavailable || e.code === Code.Aborted || (e.code === Code.Internal && /stream|socket|connect/i.test(e.rawMessage))
  );
}

export const tail: Command = {
  name: "tail",
  summary: "follow the events of a session, a user or an app as they are stored",
  options,
  async run(argv, io) {
    const { values, help } = parseOptions(options, argv, io.env);
    if (help) return helpOut(io, "tail --app APP [--user USER [--session ID]] [--from-start | --cursor C] [--json]", this, options);
    const appName = required(values.app, "--app");
    if (values.session !== undefined && values.user === undefined) throw new UsageError("--session needs --user");
    if (values.afterSeq !== undefined && values.session === undefined) throw new UsageError("--after-seq needs --session");
    const starts = [values.fromStart, values.afterSeq !== undefined, values.cursor !== undefined].filter(Boolean).length;
    if (starts > 1) throw new UsageError("give at most one of --from-start, --after-seq and --cursor");
    const client = connect(values);
    const paint = paintFor(io.stdout, io.env);
    const wide = values.session === undefined;
    let start: StreamEventsRequest["start"] =
      values.cursor !== undefined
        ? { case: "cursor", value: values.cursor }
        : values.afterSeq !== undefined
          ? { case: "afterSeq", value: BigInt(values.afterSeq) }
          : values.fromStart
            ? { case: undefined }
            : { case: "fromNow", value: create(EmptySchema) };
    let attempt = 0;
    let reconnecting = false;
    while (!io.signal.aborted) {
      try {
        const stream = client.streamEvents(
          { appName, userId: values.user ?? "", sessionId: values.session ?? "", start },
          { signal: io.signal, timeoutMs: 0 },
        );
        for await (const res of stream) {
          attempt = 0;
          if (reconnecting) {
            io.stderr.write("reconnected\n");
            reconnecting = false;
          }
          const kind = res.kind;
          if (kind.case === undefined) continue;
          // Every kind carries a cursor: resuming from it repeats nothing.
          start = { case: "cursor", value: kind.value.cursor };
          if (kind.case === "event") {
            const { event, userId, sessionId } = kind.value;
            if (values.json) io.stdout.write(`${JSON.stringify(toJson(StreamEventsResponseSchema, res))}\n`);
            else if (event) io.stdout.write(`${eventLine(event, paint, wide ? `${userId}/${sessionId}` : undefined)}\n`);
          } else if (kind.case === "caughtUp") {
            if (values.json) io.stdout.write(`${JSON.stringify(toJson(StreamEventsResponseSchema, res))}\n`);
            if (values.once) return 0;
          }
        }
        // The server ended the stream without an error: it is shutting down; resume.
        if (io.signal.aborted) break;
      } catch (err) {
        if (io.signal.aborted) break;
        if (!resumable(err)) throw err;
        if (!reconnecting) io.stderr.write(`connection lost (${ConnectError.from(err).rawMessage}); reconnecting…\n`);
        reconnecting = true;
      }
      await backoff(attempt++, io.signal);
    }
    return 0;
  },
};
