import { Code, type ConnectError } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { postgresAvailable, type ReplicaSet, startReplicas } from "../support/replicas.js";
import type { TestServer } from "../support/server.js";
import { TailRecorder } from "../support/tail.js";

const HOUR_NS = 3_600_000_000_000n;
const policy = JSON.stringify({
  defaults: { ttlSeconds: 3600 },
  apps: { "keep-forever": { ttlSeconds: null } },
});

/** Moves a session's last update two hours into the past: expired under a one-hour TTL. */
async function age(t: TestServer, appName: string, sessionId: string): Promise<void> {
  await sql`UPDATE sessions SET update_time_ns = update_time_ns - ${2n * HOUR_NS} WHERE app_name = ${appName} AND id = ${sessionId}`.execute(
    t.database.db,
  );
}

async function count(t: TestServer, appName: string): Promise<{ sessions: number; events: number }> {
  const { rows } = await sql<{ sessions: string; events: string }>`
    SELECT (SELECT count(*) FROM sessions WHERE app_name = ${appName})::text AS sessions,
           (SELECT count(*) FROM events WHERE app_name = ${appName})::text AS events`.execute(t.database.db);
  return { sessions: Number(rows[0]?.sessions), events: Number(rows[0]?.events) };
}

describeContract(
  "retention",
  (t) => {
    it("reads an expired session as NOT_FOUND at once, before any sweep", async () => {
      const appName = unique("app");
      const key = { appName, userId: "u1", sessionId: "old" };
      await t().client.createSession(key);
      await t().client.appendEvent({ ...key, event: { author: "user" } });
      await t().client.createSession({ ...key, sessionId: "fresh" });
      const appTail = new TailRecorder(t().client, { appName });
      await appTail.until((r) => r.events.length === 1);
      appTail.cancel();

      await age(t(), appName, "old");
      await expectCode(t().client.getSession(key), Code.NotFound);
      await expectCode(t().client.appendEvent({ ...key, event: { author: "user" } }), Code.NotFound);
      await expectCode(t().client.listEvents(key), Code.NotFound);
      expect(((await new TailRecorder(t().client, key).done) as ConnectError).code).toBe(Code.NotFound);
      expect((await t().client.listSessions({ appName })).sessions.map((s) => s.id)).toEqual(["fresh"]);
      const wide = new TailRecorder(t().client, { appName });
      await wide.until((r) => r.caughtUp);
      wide.cancel();
      expect(wide.events).toEqual([]);
      // The rows are still there until the sweeper runs.
      expect(await count(t(), appName)).toEqual({ sessions: 2, events: 1 });

      // The id is free again: a new, empty session.
      const again = await t().client.createSession(key);
      expect(again.session?.revision).toBe(0n);
      expect((await t().client.getSession(key)).session?.events).toEqual([]);
    });

    it("sweeps expired sessions with their events, and ends their tails", async () => {
      const appName = unique("app");
      const key = { appName, userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      await t().client.appendEvent({ ...key, event: { author: "user" } });
      for (let i = 0; i < 3; i++) await t().client.createSession({ appName, userId: "u2", sessionId: `x${i}` });
      const tail = new TailRecorder(t().client, key);
      await tail.until((r) => r.caughtUp);
      await age(t(), appName, "s");
      await age(t(), appName, "x0");
      expect(await t().server.sweeper.sweepOnce()).toBeGreaterThanOrEqual(2);
      expect(await count(t(), appName)).toEqual({ sessions: 2, events: 0 });
      expect(((await tail.done) as ConnectError).code).toBe(Code.NotFound);
    });

    it("keeps the sessions of an app whose policy says so", async () => {
      const key = { appName: "keep-forever", userId: unique("u"), sessionId: "s" };
      await t().client.createSession(key);
      await age(t(), key.appName, key.sessionId);
      await t().server.sweeper.sweepOnce();
      expect((await t().client.getSession(key)).session?.id).toBe("s");
    });

    it("erases everything of one user in one app, and nothing else", async () => {
      const appName = unique("app");
      await t().client.createSession({ appName, userId: "gone", sessionId: "a", state: { "user:x": 1, "app:shared": 1 } });
      await t().client.createSession({ appName, userId: "gone", sessionId: "b" });
      for (const sessionId of ["a", "b"]) {
        await t().client.appendEvent({ appName, userId: "gone", sessionId, event: { author: "user" } });
      }
      await t().client.appendEvent({ appName, userId: "gone", sessionId: "a", event: { author: "agent" } });
      await t().client.createSession({ appName, userId: "stays", sessionId: "a", state: { "user:y": 2 } });
      await t().client.createSession({ appName: unique("other"), userId: "gone", sessionId: "a", state: { "user:z": 3 } });
      const tail = new TailRecorder(t().client, { appName, userId: "gone", sessionId: "a" });
      await tail.until((r) => r.caughtUp);

      const res = await t().client.eraseUserData({ appName, userId: "gone" });
      expect(res.sessionsDeleted).toBe(2n);
      expect(res.eventsDeleted).toBe(3n);
      expect((await t().client.listSessions({ appName, userId: "gone" })).sessions).toEqual([]);
      expect((await t().client.getUserState({ appName, userId: "gone" })).state).toEqual({});
      expect(((await tail.done) as ConnectError).code).toBe(Code.NotFound);
      // Another user, the app's shared state and the same user in another app stay.
      const stays = await t().client.getSession({ appName, userId: "stays", sessionId: "a" });
      expect(stays.session?.state).toEqual({ "user:y": 2, "app:shared": 1 });
      const again = await t().client.eraseUserData({ appName, userId: "gone" });
      expect(again.sessionsDeleted).toBe(0n);
    });
  },
  { policy },
);

describe.skipIf(!postgresAvailable())("retention sweeps on two replicas at once [postgres]", () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    set = await startReplicas(2, { policy });
  });
  afterAll(async () => {
    await set?.close();
  });

  it("delete each expired session once, without errors", async () => {
    const [a, b] = set.replicas;
    if (!a || !b) throw new Error("two replicas expected");
    const appName = unique("app");
    const ids = Array.from({ length: 1200 }, (_, i) => `s${i}`);
    for (let i = 0; i < ids.length; i += 100) {
      await Promise.all(ids.slice(i, i + 100).map((sessionId) => a.client.createSession({ appName, userId: "u", sessionId })));
    }
    await sql`UPDATE sessions SET update_time_ns = update_time_ns - ${2n * HOUR_NS} WHERE app_name = ${appName}`.execute(
      a.server.database.db,
    );
    const [da, db] = await Promise.all([a.server.sweeper.sweepOnce(), b.server.sweeper.sweepOnce()]);
    expect(da + db).toBe(1200);
    const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM sessions WHERE app_name = ${appName}`.execute(
      a.server.database.db,
    );
    expect(rows[0]?.n).toBe("0");
  });
});
