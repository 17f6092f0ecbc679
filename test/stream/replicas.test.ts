import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { unique } from "../support/ids.js";
import { postgresAvailable, type ReplicaSet, startReplicas } from "../support/replicas.js";
import { TailRecorder } from "../support/tail.js";

describe.skipIf(!postgresAvailable())("StreamEvents across replicas [postgres]", () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    // No safety-net polling: only NOTIFY and the reconnect path may deliver,
    // so these tests show that they do.
    set = await startReplicas(2, { feedPollMs: 60_000 });
  });
  afterAll(async () => {
    await set?.close();
  });

  it("sees each other's LISTEN connection, so each NOTIFYs the other", async () => {
    const [a, b] = set.replicas;
    if (!a || !b) throw new Error("two replicas expected");
    // B started after A, so B saw A at once; A sees B at its next look.
    expect(b.server.streams.hasPeers).toBe(true);
    const deadline = Date.now() + 10_000;
    while (!a.server.streams.hasPeers && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(a.server.streams.hasPeers).toBe(true);
  });

  it("delivers to a tail on replica A what is appended through replica B", async () => {
    const [a, b] = set.replicas;
    if (!a || !b) throw new Error("two replicas expected");
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await b.client.createSession(key);
    const session = new TailRecorder(a.client, key);
    const app = new TailRecorder(a.client, { appName: key.appName });
    await session.until((r) => r.caughtUp);
    await app.until((r) => r.caughtUp);
    for (let i = 0; i < 5; i++) await b.client.appendEvent({ ...key, event: { author: "user" } });
    await session.until((r) => r.events.length === 5, 5000);
    await app.until((r) => r.events.length === 5, 5000);
    expect(session.events.map((e) => Number(e.event?.seq))).toEqual([1, 2, 3, 4, 5]);
    session.cancel();
    app.cancel();
  });

  it("loses nothing when the LISTEN backend is terminated mid-stream", async () => {
    const [a, b] = set.replicas;
    if (!a || !b) throw new Error("two replicas expected");
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await b.client.createSession(key);
    const session = new TailRecorder(a.client, key);
    const user = new TailRecorder(a.client, { appName: key.appName, userId: "u1" });
    await session.until((r) => r.caughtUp);
    await user.until((r) => r.caughtUp);
    await b.client.appendEvent({ ...key, event: { author: "user" } });
    await session.until((r) => r.events.length === 1, 5000);

    const listener = a.server.streams.notifications;
    const pid = listener?.backendPid;
    expect(pid).toBeTypeOf("number");
    const admin = new pg.Client({ connectionString: inject("postgresAdminUrl") });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ ok: boolean }>("SELECT pg_terminate_backend($1) AS ok", [pid]);
      expect(rows[0]?.ok).toBe(true);
    } finally {
      await admin.end();
    }
    // Appends while A has no LISTEN connection: their NOTIFYs reach nobody on A.
    for (let i = 0; i < 10; i++) await b.client.appendEvent({ ...key, event: { author: "agent" } });
    await session.until((r) => r.events.length === 11, 15_000);
    await user.until((r) => r.events.length === 11, 15_000);
    expect(session.events.map((e) => Number(e.event?.seq))).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(user.events.map((e) => Number(e.event?.seq))).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(listener?.connected).toBe(true);
    expect(listener?.backendPid).not.toBe(pid);
    session.cancel();
    user.cancel();
  });

  it("ends a tail on replica A when replica B deletes its session", async () => {
    const [a, b] = set.replicas;
    if (!a || !b) throw new Error("two replicas expected");
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await b.client.createSession(key);
    const tail = new TailRecorder(a.client, key);
    await tail.until((r) => r.caughtUp);
    await b.client.deleteSession(key);
    const err = (await tail.done) as { code?: number };
    expect(err?.code).toBe(5);
  });
});
