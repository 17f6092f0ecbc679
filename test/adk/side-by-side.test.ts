// GrpcSessionService next to adk-js's own DatabaseSessionService (on a
// PostgreSQL database of its own): the same calls with the same inputs must
// give the same answers, the same errors and the same in-memory sessions.

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type BaseSessionService, createEvent, DatabaseSessionService, type Event, type Session } from "@google/adk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { GrpcSessionService } from "../../src/adk/index.js";
import { postgresBackend } from "../support/backends.js";
import { unique } from "../support/ids.js";
import { withDatabase } from "../support/postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";

const USER = "u1";
const backend = postgresBackend();

/** A session's data without its update time (compared separately). */
function comparable(s: Session | undefined) {
  if (!s) return s;
  return { id: s.id, appName: s.appName, userId: s.userId, state: s.state, events: JSON.parse(JSON.stringify(s.events)) as unknown };
}

/**
 * Event times after the session's creation: the store never moves a
 * session's update time back for a back-dated event, where adk-js's database
 * takes the event's time (the one documented difference in times).
 */
function future(): number {
  return Date.now() + 3_600_000;
}

async function outcome<T>(call: Promise<T>): Promise<{ ok: T } | { error: string }> {
  try {
    return { ok: await call };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

describe.skipIf(!backend.available)("adk-js GrpcSessionService side by side with DatabaseSessionService", () => {
  const adminUrl = inject("postgresAdminUrl");
  const adkDatabase = `adkjs_${unique("db")
    .replace(/[^a-z0-9_]/gi, "_")
    .toLowerCase()}`;
  let server: TestServer;
  let theirs: DatabaseSessionService;
  let ours: GrpcSessionService;

  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    server = await startTestServer(backend);
    ours = new GrpcSessionService(createClient(SessionService, createGrpcTransport({ baseUrl: server.server.url })));
    await admin(`CREATE DATABASE ${adkDatabase}`);
    theirs = new DatabaseSessionService(withDatabase(adminUrl, adkDatabase));
  });
  afterAll(async () => {
    await (theirs as unknown as { orm?: { close(): Promise<void> } }).orm?.close();
    await admin(`DROP DATABASE IF EXISTS ${adkDatabase} WITH (FORCE)`);
    await server?.close();
  });

  /** Runs one call on both services and requires the same outcome. */
  async function both<T>(call: (svc: BaseSessionService) => Promise<T>, view: (value: T) => unknown = (v) => v) {
    const [want, got] = [await outcome(call(theirs)), await outcome(call(ours))];
    const show = (o: { ok: T } | { error: string }) => ("ok" in o ? { ok: view(o.ok) } : o);
    expect(show(got)).toEqual(show(want));
    return [want, got] as const;
  }

  const event = (text: string, delta: Record<string, unknown>, timestamp: number, extra: Partial<Event> = {}) =>
    createEvent({
      invocationId: "inv-1",
      author: "agent",
      timestamp,
      content: { role: "model", parts: [{ text }] },
      actions: { stateDelta: delta },
      ...extra,
    });

  /** Appends a copy of one event through each service's own copy of a session. */
  async function appendBoth(sessions: { theirs: Session; ours: Session }, e: Event) {
    const [a, b] = [structuredClone(e), structuredClone(e)];
    const want = await outcome(theirs.appendEvent({ session: sessions.theirs, event: a }));
    const got = await outcome(ours.appendEvent({ session: sessions.ours, event: b }));
    const plain = (o: typeof want) => ("ok" in o ? { ok: JSON.parse(JSON.stringify(o.ok)) as unknown } : o);
    expect(plain(got)).toEqual(plain(want));
    expect(comparable(sessions.ours)).toEqual(comparable(sessions.theirs));
    expect(sessions.ours.lastUpdateTime === e.timestamp).toBe(sessions.theirs.lastUpdateTime === e.timestamp);
  }

  const get = async (
    svc: BaseSessionService,
    appName: string,
    sessionId: string,
    config?: { numRecentEvents?: number; afterTimestamp?: number },
  ) => {
    const s = await svc.getSession({ appName, userId: USER, sessionId, config });
    if (!s) throw new Error("missing");
    return s;
  };

  it("creates, refuses a taken id, and reads missing sessions alike", async () => {
    const appName = unique("app");
    await both(
      (svc) => svc.createSession({ appName, userId: USER, sessionId: "s1", state: { "app:a": 1, "user:u": "x", k: [1], "temp:t": true } }),
      comparable,
    );
    await both((svc) => svc.createSession({ appName, userId: USER, sessionId: "s1" }), comparable);
    await both((svc) => svc.getSession({ appName, userId: USER, sessionId: "nope" }), comparable);
    await both((svc) => svc.getSession({ appName, userId: "other", sessionId: "s1" }), comparable);
    await both((svc) => svc.createSession({ appName, userId: "u2", sessionId: "s2" }), comparable);
  });

  it("appends alike: deltas in every scope, temp: keys, nulls, partial events, and what storage holds after", async () => {
    const appName = unique("app");
    const sessions = {
      theirs: await theirs.createSession({ appName, userId: USER, sessionId: "s", state: { keep: 1, "user:u": 0 } }),
      ours: await ours.createSession({ appName, userId: USER, sessionId: "s", state: { keep: 1, "user:u": 0 } }),
    };
    const base = future();
    await appendBoth(sessions, event("one", { a: 1, "temp:scratch": "x", "user:u": 1, "app:flag": true }, base));
    await appendBoth(sessions, event("two", { a: { nested: [1, null] }, keep: null, b: false }, base + 1000));
    await appendBoth(sessions, event("chunk", { c: 1 }, base + 1500, { partial: true }));
    await appendBoth(sessions, event("three", {}, base + 2000, { branch: "root.sub", turnComplete: true }));
    await appendBoth(
      sessions,
      event("four", { "user:u": 2 }, base + 3000, {
        content: {
          role: "model",
          parts: [
            { functionCall: { id: "fc-1", name: "lookup", args: { q: ["x", 1.5, null] } } },
            { functionResponse: { id: "fc-1", name: "lookup", response: { ok: true } } },
            { inlineData: { mimeType: "application/octet-stream", data: "AAH/fn+A/v8A" } },
            { text: "thinking", thought: true, thoughtSignature: "AP8AEHNpZ/7/" },
          ],
        },
        longRunningToolIds: ["fc-1"],
        customMetadata: { trace: "t1" },
        usageMetadata: { totalTokenCount: 12 },
        output: { answer: 42 },
      }),
    );
    await both((svc) => get(svc, appName, "s"), comparable);
    for (const config of [
      { numRecentEvents: 0 },
      { numRecentEvents: 2 },
      { numRecentEvents: 99 },
      { afterTimestamp: base + 1000 },
      { afterTimestamp: base + 999 },
    ]) {
      await both((svc) => get(svc, appName, "s", config), comparable);
    }
    await both(
      (svc) => svc.createSession({ appName, userId: USER, sessionId: "other" }),
      (s) => s.state,
    );
  });

  it("lists and pages alike", async () => {
    const appName = unique("app");
    const base = future();
    for (const [i, id] of ["b", "a", "c", "d"].entries()) {
      for (const svc of [theirs, ours] as BaseSessionService[]) {
        const s = await svc.createSession({ appName, userId: i === 3 ? "u2" : USER, sessionId: id, state: { n: i } });
        await svc.appendEvent({ session: s, event: event(id, { last: id }, base + (10 - i) * 1000) });
      }
    }
    const ids = (r: { sessions: Session[]; page: number; limit: number; totalItems: number; totalPages: number }) => ({
      ...r,
      sessions: r.sessions.map((s) => [s.id, s.userId, s.state, s.events.length]),
    });
    for (const order of ["asc", "desc"] as const) {
      await both((svc) => svc.listSessions({ appName, userId: USER, order }), ids);
      await both((svc) => svc.listSessions({ appName, order }), ids);
      await both((svc) => svc.listSessions({ appName, userId: USER, order, limit: 2 }), ids);
      await both((svc) => svc.listSessions({ appName, userId: USER, order, limit: 2, page: 2 }), ids);
      await both((svc) => svc.listSessions({ appName, userId: USER, order, limit: 2, offset: 1 }), ids);
      await both((svc) => svc.listSessions({ appName, userId: USER, order, offset: 2 }), ids);
      await both((svc) => svc.listSessions({ appName, order, limit: 0 }), ids);
    }
    const sorted = (r: { sessions: Session[]; totalItems: number }) => ({ ...r, sessions: r.sessions.map((s) => s.id).sort() });
    await both((svc) => svc.listSessions({ appName }), sorted);
    await both((svc) => svc.listSessions({ appName: `${appName}-none` }), sorted);
  });

  it("treats a stale copy, a missing session and a delete alike", async () => {
    const appName = unique("app");
    const base = future();
    const copies = { theirs: [] as Session[], ours: [] as Session[] };
    for (const [name, svc] of [
      ["theirs", theirs],
      ["ours", ours],
    ] as const) {
      await svc.createSession({ appName, userId: USER, sessionId: "s" });
      copies[name].push(await get(svc, appName, "s"), await get(svc, appName, "s"));
    }
    const [theirFirst, theirSecond] = copies.theirs as [Session, Session];
    const [ourFirst, ourSecond] = copies.ours as [Session, Session];
    await appendBoth({ theirs: theirFirst, ours: ourFirst }, event("first", { k: "first", a: 1 }, base));
    // The second copy is behind storage: both services store the append and reload that copy.
    await appendBoth({ theirs: theirSecond, ours: ourSecond }, event("second", { k: "second" }, base + 1000));
    await both((svc) => get(svc, appName, "s"), comparable);

    const gone = { theirs: await get(theirs, appName, "s"), ours: await get(ours, appName, "s") };
    await both((svc) => svc.deleteSession({ appName, userId: USER, sessionId: "s" }));
    await both((svc) => svc.deleteSession({ appName, userId: USER, sessionId: "s" }));
    await both((svc) => svc.getSession({ appName, userId: USER, sessionId: "s" }), comparable);
    const e = event("late", {}, base + 2000);
    await both((svc) => svc.appendEvent({ session: svc === theirs ? gone.theirs : gone.ours, event: structuredClone(e) }));
  });
});
