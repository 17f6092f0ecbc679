import { PGlite, types } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListEventsRequest_Order } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { openDatabase, PGLITE_EXTENSIONS } from "../../src/storage/database.js";
import { postgresBackend, type TestBackend } from "../support/backends.js";
import { unique } from "../support/ids.js";
import { startTestServer, type TestServer } from "../support/server.js";

// An agent reads its session on every turn: GetSession with a window,
// ListEvents and the first page of ListSessions must each cost the server
// one database round trip. Counted where the round trip happens: every
// query node-postgres sends on a connection (`Client.query`), every query
// of the embedded PGlite instance.

let sent = 0;

const originalQuery = pg.Client.prototype.query;
function countPostgres(): void {
  const counting = function (this: pg.Client, ...args: unknown[]) {
    sent++;
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  };
  pg.Client.prototype.query = counting as unknown as typeof originalQuery;
}

const countingPglite: TestBackend = {
  name: "pglite",
  available: true,
  async open() {
    const pglite = new PGlite("memory://", {
      parsers: { [types.INT8]: (value: string) => BigInt(value) },
      extensions: PGLITE_EXTENSIONS,
    });
    const query = pglite.query.bind(pglite);
    const exec = pglite.exec.bind(pglite);
    pglite.query = ((...args: Parameters<typeof query>) => {
      sent++;
      return query(...args);
    }) as typeof pglite.query;
    pglite.exec = ((...args: Parameters<typeof exec>) => {
      sent++;
      return exec(...args);
    }) as typeof pglite.exec;
    return openDatabase({ pglite });
  },
};

/**
 * Round trips of one call. Background work of the server (its look for
 * other replicas, the feed's poll) only ever adds queries, so the least
 * of three tries is the call's own count.
 */
async function roundTrips(call: () => Promise<unknown>): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const before = sent;
    await call();
    least = Math.min(least, sent - before);
  }
  return least;
}

for (const backend of [countingPglite, postgresBackend()]) {
  describe.skipIf(!backend.available)(`reads in one round trip [${backend.name}]`, () => {
    let t: TestServer;
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    beforeAll(async () => {
      if (backend.name === "postgres") countPostgres();
      t = await startTestServer(backend);
      await t.client.createSession({ ...key, state: { "app:region": "eu", "user:tier": "gold", topic: "order" } });
      for (let i = 1; i <= 30; i++) {
        await t.client.appendEvent({ ...key, event: { author: "user", invocationId: `i${i}`, actions: { stateDelta: { turn: i } } } });
      }
      await t.client.createSession({ ...key, sessionId: "s2" });
    });
    afterAll(async () => {
      await t?.close();
      pg.Client.prototype.query = originalQuery;
    });

    it("GetSession with a window: one round trip, scoped state merged, the newest events in order", async () => {
      let events: bigint[] = [];
      let state: unknown;
      const n = await roundTrips(async () => {
        const { session } = await t.client.getSession({ ...key, numRecentEvents: 20 });
        events = session?.events.map((e) => e.seq) ?? [];
        state = session?.state;
      });
      expect(n).toBe(1);
      expect(events).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 11)));
      expect(state).toEqual({ "app:region": "eu", "user:tier": "gold", topic: "order", turn: 30 });
    });

    it("GetSession without a window, with after_timestamp, and of a missing session: one round trip each", async () => {
      expect(await roundTrips(() => t.client.getSession(key))).toBe(1);
      const { session } = await t.client.getSession({ ...key, numRecentEvents: 1 });
      const last = session?.events[0]?.timestamp;
      expect(await roundTrips(() => t.client.getSession({ ...key, afterTimestamp: last }))).toBe(1);
      const after = await t.client.getSession({ ...key, afterTimestamp: last });
      expect(after.session?.events.map((e) => e.seq)).toEqual([30n]);
      expect(await roundTrips(() => t.client.getSession({ ...key, sessionId: "missing" }).catch(() => undefined))).toBe(1);
    });

    it("ListEvents: one round trip per page, either order", async () => {
      let seqs: bigint[] = [];
      expect(
        await roundTrips(async () => {
          const res = await t.client.listEvents({ ...key, pageSize: 5, order: ListEventsRequest_Order.DESCENDING });
          seqs = res.events.map((e) => e.seq);
        }),
      ).toBe(1);
      expect(seqs).toEqual([30n, 29n, 28n, 27n, 26n]);
      const first = await t.client.listEvents({ ...key, pageSize: 5 });
      expect(await roundTrips(() => t.client.listEvents({ ...key, pageSize: 5, pageToken: first.nextPageToken }))).toBe(1);
    });

    it("ListSessions: one round trip for the first page, app and user state merged", async () => {
      let states: unknown[] = [];
      expect(
        await roundTrips(async () => {
          const res = await t.client.listSessions({ appName: key.appName, pageSize: 10 });
          states = res.sessions.map((s) => s.state);
        }),
      ).toBe(1);
      expect(states).toEqual([
        { "app:region": "eu", "user:tier": "gold", topic: "order", turn: 30 },
        { "app:region": "eu", "user:tier": "gold" },
      ]);
      expect(await roundTrips(() => t.client.listSessions({ appName: key.appName, userId: key.userId, pageSize: 1 }))).toBe(1);
    });
  });
}
