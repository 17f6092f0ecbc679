import { createReadStream, existsSync, statSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { fromBinary, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import type { AppStateRow, DumpedSession, DumpPosition, EventRow, UserStateRow } from "../storage/dump.js";
import type { JsonRecord } from "../storage/schema.js";

// The JSON Lines of `sessionstore export`: a header, app states, user states,
// then each session followed by its events, and an end record with the
// totals. Big integers (seq, nanosecond times, revision) are strings; an
// event is its protobuf JSON, every field included.

export const FORMAT = "sessionstore-export";
export const VERSION = 1;

export type ExportRecord =
  | { kind: "header"; format: string; version: number; exportedAt: string; scope: { app?: string; user?: string } }
  | { kind: "app_state"; app: string; state: JsonRecord; updateTimeNs: string }
  | { kind: "user_state"; app: string; user: string; state: JsonRecord; updateTimeNs: string }
  | {
      kind: "session";
      app: string;
      user: string;
      id: string;
      state: JsonRecord;
      revision: string;
      createTimeNs: string;
      updateTimeNs: string;
      initialState: JsonRecord | null;
      forkedFrom: { sessionId: string; seq: string } | null;
      events: number;
    }
  | { kind: "event"; seq: string; id: string; timestampNs: string; event: JsonValue }
  | { kind: "end"; appStates: number; userStates: number; sessions: number; events: number };

export interface Totals {
  appStates: number;
  userStates: number;
  sessions: number;
  events: number;
}

export const line = (record: ExportRecord) => `${JSON.stringify(record)}\n`;

export const appStateRecord = (r: AppStateRow): ExportRecord => ({
  kind: "app_state",
  app: r.app,
  state: r.state,
  updateTimeNs: String(r.updateTimeNs),
});
export const userStateRecord = (r: UserStateRow): ExportRecord => ({
  kind: "user_state",
  app: r.app,
  user: r.user,
  state: r.state,
  updateTimeNs: String(r.updateTimeNs),
});
export const sessionRecord = (s: DumpedSession): ExportRecord => ({
  kind: "session",
  app: s.app,
  user: s.user,
  id: s.id,
  state: s.state,
  revision: String(s.revision),
  createTimeNs: String(s.createTimeNs),
  updateTimeNs: String(s.updateTimeNs),
  initialState: s.initialState,
  forkedFrom: s.forkedFrom ? { sessionId: s.forkedFrom.sessionId, seq: String(s.forkedFrom.seq) } : null,
  events: s.eventCount,
});
export const eventRecord = (e: EventRow): ExportRecord => ({
  kind: "event",
  seq: String(e.seq),
  id: e.eventId,
  timestampNs: String(e.timestampNs),
  event: toJson(EventSchema, fromBinary(EventSchema, e.body)),
});

export function eventRow(r: Extract<ExportRecord, { kind: "event" }>): EventRow {
  return {
    seq: BigInt(r.seq),
    eventId: r.id,
    timestampNs: BigInt(r.timestampNs),
    body: toBinary(EventSchema, fromJson(EventSchema, r.event)),
  };
}

export class FormatError extends Error {}

/** Records of a JSON Lines stream, with their line numbers; a line that is not a record is a FormatError. */
export async function* readRecords(input: NodeJS.ReadableStream): AsyncGenerator<{ record: ExportRecord; lineNo: number }> {
  let lineNo = 0;
  for await (const text of lines(input)) {
    lineNo++;
    if (text.trim() === "") continue;
    let record: ExportRecord;
    try {
      record = JSON.parse(text) as ExportRecord;
    } catch {
      throw new FormatError(`line ${lineNo} is not JSON (a file cut short?)`);
    }
    if (typeof record !== "object" || record === null || typeof record.kind !== "string")
      throw new FormatError(`line ${lineNo} is not an export record`);
    yield { record, lineNo };
  }
}

/**
 * Lines of a stream, read as the consumer asks (the stream's own async
 * iterator keeps backpressure; readline's can stall a consumer that awaits
 * other work between lines).
 */
async function* lines(input: NodeJS.ReadableStream): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  for await (const chunk of input) {
    rest += typeof chunk === "string" ? chunk : decoder.write(chunk as Buffer);
    let at = rest.indexOf("\n");
    while (at >= 0) {
      yield rest.slice(0, at).replace(/\r$/, "");
      rest = rest.slice(at + 1);
      at = rest.indexOf("\n");
    }
  }
  rest += decoder.end();
  if (rest !== "") yield rest;
}

export interface ResumePoint {
  /** Bytes of the file that hold complete records; the rest is cut off. */
  offset: number;
  position: DumpPosition;
  totals: Totals;
  complete: boolean;
  hasHeader: boolean;
}

/**
 * Where an interrupted export continues: after its last complete app state,
 * user state or session (one whose events are all there). Half a line or a
 * session missing events is dropped and written again.
 */
export async function resumePoint(path: string): Promise<ResumePoint> {
  const empty: ResumePoint = {
    offset: 0,
    position: { kind: "start" },
    totals: { appStates: 0, userStates: 0, sessions: 0, events: 0 },
    complete: false,
    hasHeader: false,
  };
  if (!existsSync(path) || statSync(path).size === 0) return empty;
  const size = statSync(path).size;
  let at = 0;
  const point: ResumePoint = { ...empty, totals: { ...empty.totals } };
  let open: { app: string; user: string; id: string; left: number; events: number } | undefined;
  for await (const text of lines(createReadStream(path))) {
    const end = at + Buffer.byteLength(text) + 1;
    if (end > size) break; // the last line has no newline: cut short
    let record: ExportRecord;
    try {
      record = JSON.parse(text) as ExportRecord;
    } catch {
      break;
    }
    at = end;
    const done = (position: DumpPosition) => {
      point.offset = at;
      point.position = position;
    };
    switch (record.kind) {
      case "header":
        point.hasHeader = true;
        done({ kind: "start" });
        break;
      case "app_state":
        point.totals.appStates++;
        done({ kind: "app_state", app: record.app });
        break;
      case "user_state":
        point.totals.userStates++;
        done({ kind: "user_state", app: record.app, user: record.user });
        break;
      case "session":
        open = { app: record.app, user: record.user, id: record.id, left: record.events, events: 0 };
        break;
      case "event":
        if (open) {
          open.left--;
          open.events++;
        }
        break;
      case "end":
        point.complete = true;
        point.offset = at;
        return point;
    }
    if (open && open.left === 0) {
      point.totals.sessions++;
      point.totals.events += open.events;
      done({ kind: "session", app: open.app, user: open.user, id: open.id });
      open = undefined;
    }
  }
  return point;
}

/** A progress line on a terminal, rewritten in place at most five times a second. */
export function progress(stream: NodeJS.WritableStream & { isTTY?: boolean }, verb: string) {
  let last = 0;
  const started = Date.now();
  const text = (t: Totals) => {
    const secs = (Date.now() - started) / 1000;
    const rate = secs > 0 ? Math.round(t.events / secs) : 0;
    return `${verb} ${t.sessions.toLocaleString("en")} sessions, ${t.events.toLocaleString("en")} events, ${t.appStates + t.userStates} states (${rate.toLocaleString("en")} events/s)`;
  };
  return {
    update(t: Totals) {
      if (!stream.isTTY || Date.now() - last < 200) return;
      last = Date.now();
      stream.write(`\r\u001b[K${text(t)}`);
    },
    done(t: Totals, extra = "") {
      stream.write(`${stream.isTTY ? "\r\u001b[K" : ""}${text(t)}${extra}\n`);
    },
  };
}
