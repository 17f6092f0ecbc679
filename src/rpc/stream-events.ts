import { create, fromBinary } from "@bufbuild/protobuf";
import { durationMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { trace } from "@opentelemetry/api";
import { type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import {
  type StreamEventsRequest,
  type StreamEventsResponse,
  StreamEventsResponseSchema,
  StreamedEventSchema,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { Unavailable } from "../domain/outcomes.js";
import { nowNs, nsToTimestamp } from "../domain/time.js";
import type { LoggedEvent } from "../storage/event-log.js";
import { type LogPosition, ORIGIN } from "../storage/log-position.js";
import { databaseOutcome } from "../storage/pg-errors.js";
import { notFound, type SessionStore } from "../storage/session-store.js";
import type { StreamHub } from "../stream/hub.js";
import { type TailItem, type TailOptions, tailScope, tailSession } from "../stream/tail.js";
import { tracingEnabled } from "../tracing/tracing.js";
import { asField, encodeWithStored, withEncoding } from "./encoded.js";
import { decodeToken, parseBigInt, tokenEncoder } from "./page-token.js";
import { invalid, requireId } from "./validate.js";

export interface StreamSettings {
  defaultHeartbeatMs: number;
  /** Events one tail may hold in memory before it re-reads from the table. */
  tailCapacity: number;
  /** Rows per catch-up read. */
  readBatch: number;
  /**
   * Told, as a tail hands an event over, how many seconds ago this process
   * committed it (events committed elsewhere, long ago, or before the tail
   * opened are not timed).
   */
  feedLag?: (scope: TailScope, seconds: number) => void;
}

/** What a tail follows. */
export type TailScope = "session" | "user" | "app";

const MIN_HEARTBEAT_MS = 50;
const MAX_HEARTBEAT_MS = 5 * 60_000;

export function streamEventsImpl(store: SessionStore, hub: StreamHub, settings: StreamSettings) {
  return async function* streamEvents(req: StreamEventsRequest, ctx: HandlerContext): AsyncGenerator<StreamEventsResponse> {
    const appName = requireId("app_name", req.appName);
    const userId = req.userId === "" ? undefined : requireId("user_id", req.userId);
    const sessionId = req.sessionId === "" ? undefined : requireId("session_id", req.sessionId);
    if (sessionId !== undefined && userId === undefined) throw invalid("session_id needs user_id: a session belongs to one user");
    const scopeKey = ["StreamEvents", appName, userId ?? "", sessionId ?? ""];
    const scope = JSON.stringify(scopeKey);
    const options: TailOptions = {
      heartbeatMs: heartbeat(req, settings.defaultHeartbeatMs),
      // HandlerContext.signal also fires when the call completes normally.
      signal: AbortSignal.any([ctx.signal, hub.stopping]),
      capacity: settings.tailCapacity,
      batch: settings.readBatch,
    };
    const start = req.start;
    const feedLag = settings.feedLag;
    const opened = performance.now();
    const timeDelivery = (event: LoggedEvent, kind: TailScope) => {
      if (!feedLag) return;
      const seconds = hub.commitTimes.secondsSince(event, performance.now(), opened);
      if (seconds !== undefined) feedLag(kind, seconds);
    };

    if (sessionId !== undefined && userId !== undefined) {
      let from: bigint | "now" = 0n;
      if (start.case === "afterSeq") {
        if (start.value < 0n) throw invalid("after_seq must not be negative");
        from = start.value;
      } else if (start.case === "cursor") {
        from = parseBigInt("cursor", decodeToken("cursor", start.value, scopeKey, ["s"] as const).s);
      } else if (start.case === "fromNow") {
        from = "now";
      }
      const key = { appName, userId, sessionId };
      const sessionPk = await store.sessionPk(key);
      if (sessionPk === undefined) throw notFound(key);
      const encode = tokenEncoder(scopeKey);
      const cursor = (seq: bigint) => encode({ s: seq.toString() });
      try {
        for await (const item of tailSession({ ...key, sessionPk }, from, hub.tailDeps, options)) {
          if (item.kind === "event") timeDelivery(item.event, "session");
          yield respond(item, scope, cursor);
        }
      } catch (err) {
        throw resumable(err);
      }
      throwIfEnded(hub, ctx.signal);
      return;
    }

    if (start.case === "afterSeq") throw invalid("after_seq is for one session; use cursor for a user's or an app's sessions");
    let from: LogPosition | "now" = ORIGIN;
    if (start.case === "cursor") {
      const t = decodeToken("cursor", start.value, scopeKey, ["t", "p"] as const);
      from = { tx: parseBigInt("cursor", t.t), pos: parseBigInt("cursor", t.p) };
    } else if (start.case === "fromNow") {
      from = "now";
    }
    const encode = tokenEncoder(scopeKey);
    const cursor = (p: LogPosition) => encode({ t: p.tx.toString(), p: p.pos.toString() });
    try {
      for await (const item of tailScope({ appName, userId }, from, hub.tailDeps, options)) {
        if (item.kind === "event") timeDelivery(item.event, userId === undefined ? "app" : "user");
        yield respond(item, scope, cursor);
      }
    } catch (err) {
      throw resumable(err);
    }
    throwIfEnded(hub, ctx.signal);
  };
}

/**
 * A tail that lost the database ends UNAVAILABLE; its client resumes from the
 * last cursor it received (every event before it was delivered, none after).
 */
function resumable(err: unknown): unknown {
  const outcome = databaseOutcome(err);
  if (!(outcome instanceof Unavailable)) return err;
  return new Unavailable(`${outcome.message}; resume from the last cursor received`, false, { cause: err });
}

/** A tail ends only when something ended it: say what, so the client knows to resume. */
function throwIfEnded(hub: StreamHub, signal: AbortSignal): void {
  if (hub.stopping.aborted) {
    throw new ConnectError("server shutting down; resume from the last cursor received", Code.Unavailable);
  }
  // The deadline ran out or the client left.
  if (signal.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
}

function heartbeat(req: StreamEventsRequest, fallbackMs: number): number {
  if (!req.heartbeatInterval) return fallbackMs;
  const ms = durationMs(req.heartbeatInterval);
  if (!(ms >= MIN_HEARTBEAT_MS && ms <= MAX_HEARTBEAT_MS)) {
    throw invalid(`heartbeat_interval must be from ${MIN_HEARTBEAT_MS} ms to ${MAX_HEARTBEAT_MS / 60_000} minutes`);
  }
  return ms;
}

function respond<P>(item: TailItem<P>, scope: string, cursor: (position: P) => string): StreamEventsResponse {
  if (tracingEnabled()) noteDelivery(item);
  switch (item.kind) {
    case "event":
      return eventResponse(item.event, scope, () => cursor(item.position));
    case "caughtUp":
      return create(StreamEventsResponseSchema, { kind: { case: "caughtUp", value: { cursor: cursor(item.position) } } });
    case "heartbeat":
      return create(StreamEventsResponseSchema, {
        kind: { case: "heartbeat", value: { cursor: cursor(item.position), time: nsToTimestamp(nowNs()) } },
      });
  }
}

/**
 * Each event a tail delivers, and its catching up, are events on the call's
 * span (the exporter keeps the first 128 of a long tail); heartbeats are not.
 */
function noteDelivery<P>(item: TailItem<P>): void {
  if (item.kind === "event") {
    trace.getActiveSpan()?.addEvent("event delivered", {
      "sessionstore.session_id": item.event.sessionId,
      "sessionstore.seq": Number(item.event.seq),
    });
  } else if (item.kind === "caughtUp") {
    trace.getActiveSpan()?.addEvent("caught up");
  }
}

// The feed hands the same row to every tail of it, and every tail of one
// scope sends the same response for it (its position, so its cursor, comes
// from the row): build that response, decode the event and encode the answer
// once, not once per tail. The encoding is the stored event's bytes inside
// the rest (rpc/encoded.ts); responses are never changed after this.
const shared = new WeakMap<LoggedEvent, { event: Event; byScope: Map<string, StreamEventsResponse> }>();

export function eventResponse(logged: LoggedEvent, scope: string, cursor: () => string): StreamEventsResponse {
  let entry = shared.get(logged);
  const hit = entry?.byScope.get(scope);
  if (hit) return hit;
  if (!entry) {
    entry = { event: fromBinary(EventSchema, logged.body), byScope: new Map() };
    shared.set(logged, entry);
  }
  const streamed = create(StreamedEventSchema, {
    appName: logged.appName,
    userId: logged.userId,
    sessionId: logged.sessionId,
    cursor: cursor(),
  });
  const bytes = asField(
    StreamEventsResponseSchema.field.event,
    encodeWithStored(StreamedEventSchema, streamed, StreamedEventSchema.field.event, [logged.body]),
  );
  streamed.event = entry.event;
  const response = withEncoding(create(StreamEventsResponseSchema, { kind: { case: "event", value: streamed } }), bytes);
  entry.byScope.set(scope, response);
  return response;
}
