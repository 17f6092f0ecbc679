// The import: ADK's sessions, events and app and user state into a running
// Sessionstore, through its API, so the server's validation and redaction
// apply to every byte exactly as for a live agent.
//
// Idempotent and resumable: a session is created with ADK's id (one that
// exists is kept), its events are appended in ADK's order with ADK's ids (the
// server stores an id once and answers a repeat as a duplicate), and a
// session already partly imported continues after its last stored event.

import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ListEventsRequest_Order } from "../../../gen/ts/sessionstore/v1/session_service_pb.js";
import type { SessionStoreClient } from "../../client/create-client.js";
import type { AdkDatabase, AdkEvent, AdkSession, EventCursor, JsonObject } from "./adk-database.js";
import { pythonEventToProto } from "./python-event.js";

export interface ImportOptions {
  /** Only this app's sessions and state. */
  app?: string;
  /** Sessions and events read from ADK per query. */
  batch?: number;
  /** Sessions imported at once (each one's events in order). */
  concurrency?: number;
  /** Read and convert everything, write nothing. */
  dryRun?: boolean;
  onProgress?: (p: ImportProgress) => void;
}

export interface ImportProgress {
  sessionsDone: number;
  sessionsTotal: number;
  eventsDone: number;
  eventsTotal: number;
}

export interface ImportSummary {
  schema: string;
  sessions: number;
  sessionsCreated: number;
  events: number;
  eventsWritten: number;
  /** Already in the store from an earlier run. */
  eventsAlreadyThere: number;
  appStates: number;
  userStates: number;
  seconds: number;
}

/** The session the importer creates and deletes to write app and user state. */
export const STATE_CARRIER_SESSION = "adk-import-state-carrier";
/** Its user when only app state is written. */
export const STATE_CARRIER_USER = "adk-import";

export async function importAdk(
  db: AdkDatabase,
  client: SessionStoreClient | undefined,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const started = performance.now();
  const batch = options.batch ?? 500;
  const concurrency = options.concurrency ?? 8;
  if (!options.dryRun && !client) throw new Error("a client is needed unless dryRun is set");
  const progress: ImportProgress = {
    sessionsDone: 0,
    sessionsTotal: await db.countSessions(options.app),
    eventsDone: 0,
    eventsTotal: await db.countEvents(options.app),
  };
  const summary: ImportSummary = {
    schema: db.schema === "0" ? "v0 (pickled actions)" : "v1 (JSON event_data)",
    sessions: 0,
    sessionsCreated: 0,
    events: 0,
    eventsWritten: 0,
    eventsAlreadyThere: 0,
    appStates: 0,
    userStates: 0,
    seconds: 0,
  };
  const target = options.dryRun ? undefined : client;

  let after: [string, string, string] | undefined;
  for (;;) {
    const page = await db.sessions(batch, after, options.app);
    if (page.length === 0) break;
    const last = page[page.length - 1] as AdkSession;
    after = [last.appName, last.userId, last.id];
    let next = 0;
    let failed = false;
    const worker = async () => {
      while (next < page.length && !failed) {
        const s = page[next++] as AdkSession;
        const r = await importSession(db, target, s, batch, (n) => {
          progress.eventsDone += n;
          options.onProgress?.(progress);
        }).catch((e: unknown) => {
          // The other workers finish their session and stop.
          failed = true;
          throw new Error(`session ${s.appName}/${s.userId}/${s.id}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
        });
        summary.sessions += 1;
        if (r.created) summary.sessionsCreated += 1;
        summary.events += r.events;
        summary.eventsWritten += r.written;
        summary.eventsAlreadyThere += r.already;
        progress.sessionsDone += 1;
        options.onProgress?.(progress);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, page.length) }, worker));
    if (page.length < batch) break;
  }

  // ADK's app and user state last: the events' deltas above wrote the
  // shared scopes in session order, ADK's tables hold the outcome in time order.
  for (const { appName, state } of await db.appStates(options.app)) {
    if (Object.keys(state).length === 0) continue;
    if (target) await writeSharedState(target, appName, STATE_CARRIER_USER, prefixed("app:", state));
    summary.appStates += 1;
  }
  for (const { appName, userId, state } of await db.userStates(options.app)) {
    if (Object.keys(state).length === 0) continue;
    if (target) {
      const stored = (await target.getUserState({ appName, userId })).state ?? {};
      if (!sameJson(stored, state)) await writeSharedState(target, appName, userId, prefixed("user:", state));
    }
    summary.userStates += 1;
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

function prefixed(prefix: string, state: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(state).map(([k, v]) => [prefix + k, v]));
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/**
 * The API writes app and user state only through a session (its initial
 * state or its events). A session made for it and deleted at once writes
 * the state and leaves nothing else: a deleted session's app and user state
 * stay. Its id is fixed, so a run that died between the two calls cleans up
 * after itself on the next one.
 */
async function writeSharedState(client: SessionStoreClient, appName: string, userId: string, state: JsonObject): Promise<void> {
  await client.deleteSession({ appName, userId, sessionId: STATE_CARRIER_SESSION });
  await client.createSession({ appName, userId, sessionId: STATE_CARRIER_SESSION, state });
  await client.deleteSession({ appName, userId, sessionId: STATE_CARRIER_SESSION });
}

interface SessionResult {
  created: boolean;
  events: number;
  written: number;
  already: number;
}

async function* allEvents(db: AdkDatabase, s: AdkSession, batch: number): AsyncGenerator<AdkEvent[]> {
  let after: EventCursor | undefined;
  for (;;) {
    const { events, next } = await db.events(s, batch, after);
    if (events.length > 0) yield events;
    if (!next) return;
    after = next;
  }
}

async function append(client: SessionStoreClient, key: { appName: string; userId: string; sessionId: string }, e: AdkEvent) {
  try {
    return await client.appendEvent({ ...key, event: toProto(e) });
  } catch (err) {
    const message = err instanceof ConnectError ? `${Code[err.code]}: ${err.rawMessage}` : err instanceof Error ? err.message : String(err);
    throw new Error(`event ${e.id}: ${message}`, { cause: err });
  }
}

function toProto(e: AdkEvent) {
  const msg = pythonEventToProto(e.json);
  if (e.timestamp) msg.timestamp = e.timestamp;
  return msg;
}

async function importSession(
  db: AdkDatabase,
  client: SessionStoreClient | undefined,
  s: AdkSession,
  batch: number,
  progressed: (n: number) => void,
): Promise<SessionResult> {
  const key = { appName: s.appName, userId: s.userId, sessionId: s.id };
  const result: SessionResult = { created: false, events: 0, written: 0, already: 0 };
  if (!client) {
    for await (const page of allEvents(db, s, batch)) {
      for (const e of page) toProto(e);
      result.events += page.length;
      progressed(page.length);
    }
    return result;
  }

  // The initial state is what ADK's session state holds beyond its events'
  // deltas, so that the fold of the imported events gives ADK's state back
  // and a replay (`as_of_seq`) starts where ADK's session started.
  let resumeAfter: string | undefined;
  try {
    await client.createSession({ ...key, state: await initialState(db, s, batch), createTime: creationTime(s) });
    result.created = true;
  } catch (e) {
    if (!(e instanceof ConnectError && e.code === Code.AlreadyExists)) throw e;
    const last = await client.listEvents({ ...key, pageSize: 1, order: ListEventsRequest_Order.DESCENDING });
    resumeAfter = last.events[0]?.id;
  }

  let skipping = resumeAfter !== undefined;
  for await (const page of allEvents(db, s, batch)) {
    for (const e of page) {
      result.events += 1;
      if (skipping) {
        // Up to the last stored event, everything is in the store already.
        result.already += 1;
        if (e.id === resumeAfter) skipping = false;
        continue;
      }
      const res = await append(client, key, e);
      if (res.duplicate) result.already += 1;
      else if (res.stored) result.written += 1;
    }
    progressed(page.length);
  }
  if (skipping) {
    // The store's last event is not one of ADK's: something else wrote to the
    // session. Every event goes again; the ones stored are answered as duplicates.
    result.already = 0;
    for await (const page of allEvents(db, s, batch)) {
      for (const e of page) {
        const res = await append(client, key, e);
        if (res.duplicate) result.already += 1;
        else if (res.stored) result.written += 1;
      }
    }
  }
  return result;
}

/**
 * ADK's last update time is the timestamp of the last event appended, even
 * one dated before the session was created (the store's never moves back).
 * Starting the session no later than that keeps ADK's last update time, which
 * ADK's Session shows; its create time ADK never shows.
 */
function creationTime(s: AdkSession): Timestamp {
  const ns = (t: Timestamp) => t.seconds * 1_000_000_000n + BigInt(t.nanos);
  return ns(s.updateTime) < ns(s.createTime) ? s.updateTime : s.createTime;
}

async function initialState(db: AdkDatabase, s: AdkSession, batch: number): Promise<JsonObject> {
  const written = new Set<string>();
  for await (const page of allEvents(db, s, batch)) {
    for (const e of page) {
      const actions = e.json.actions;
      const delta = actions && typeof actions === "object" && !Array.isArray(actions) ? actions.state_delta : undefined;
      if (delta && typeof delta === "object" && !Array.isArray(delta)) for (const k of Object.keys(delta)) written.add(k);
    }
  }
  return Object.fromEntries(Object.entries(s.state).filter(([k]) => !written.has(k)));
}
