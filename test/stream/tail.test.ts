import { Code, ConnectError } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { TailRecorder } from "../support/tail.js";

describeContract("StreamEvents", (t, backend) => {
  const seqs = (tail: TailRecorder) => tail.events.map((e) => Number(e.event?.seq));

  it("sends no NOTIFY when it is the only server on its database", () => {
    // Embedded: no LISTEN/NOTIFY at all. PostgreSQL: no other replica's LISTEN connection seen.
    if (backend.name === "postgres") expect(t().server.streams.hasPeers).toBe(false);
    else expect(t().server.streams.notifications).toBeUndefined();
  });

  it("delivers a session's history, then caught_up, then live events", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    for (let i = 0; i < 3; i++) await t().client.appendEvent({ ...key, event: { author: "user", invocationId: `h${i}` } });
    const tail = new TailRecorder(t().client, key);
    await tail.until((r) => r.caughtUp);
    expect(seqs(tail)).toEqual([1, 2, 3]);
    expect(tail.responses[3]?.kind.case).toBe("caughtUp");
    for (let i = 0; i < 3; i++) await t().client.appendEvent({ ...key, event: { author: "agent" } });
    await tail.until((r) => r.events.length === 6);
    expect(seqs(tail)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(tail.events[0]?.sessionId).toBe("s");
    expect(tail.events[0]?.event?.invocationId).toBe("h0");
    tail.cancel();
    await tail.done;
  });

  it("starts after after_seq (exclusive), from a cursor, or from now", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    for (let i = 0; i < 4; i++) await t().client.appendEvent({ ...key, event: { author: "user" } });
    const after = new TailRecorder(t().client, { ...key, start: { case: "afterSeq", value: 2n } });
    await after.until((r) => r.caughtUp);
    expect(seqs(after)).toEqual([3, 4]);
    const cursor = after.events[0]?.cursor as string;
    const resumed = new TailRecorder(t().client, { ...key, start: { case: "cursor", value: cursor } });
    await resumed.until((r) => r.caughtUp);
    expect(seqs(resumed)).toEqual([4]);
    const live = new TailRecorder(t().client, { ...key, start: { case: "fromNow", value: {} } });
    await live.until((r) => r.caughtUp);
    expect(seqs(live)).toEqual([]);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    await live.until((r) => r.events.length === 1);
    expect(seqs(live)).toEqual([5]);
    for (const tail of [after, resumed, live]) tail.cancel();
  });

  it("tails every session of a user and of an app, and resumes from a cursor", async () => {
    const appName = unique("app");
    for (const [userId, sessionId] of [
      ["u1", "a"],
      ["u1", "b"],
      ["u2", "c"],
    ] as const) {
      await t().client.createSession({ appName, userId, sessionId });
      await t().client.appendEvent({ appName, userId, sessionId, event: { author: "user" } });
    }
    const user = new TailRecorder(t().client, { appName, userId: "u1" });
    const app = new TailRecorder(t().client, { appName });
    // Across sessions, an event can reach a tail after caught_up when a write
    // transaction elsewhere in the cluster holds the watermark back: wait for
    // the events, not for the marker.
    await user.until((r) => r.caughtUp && r.events.length === 2);
    await app.until((r) => r.caughtUp && r.events.length === 3);
    expect(user.events.map((e) => e.sessionId).sort()).toEqual(["a", "b"]);
    expect(app.events.map((e) => e.sessionId).sort()).toEqual(["a", "b", "c"]);
    await t().client.appendEvent({ appName, userId: "u2", sessionId: "c", event: { author: "agent" } });
    await t().client.appendEvent({ appName, userId: "u1", sessionId: "a", event: { author: "agent" } });
    await app.until((r) => r.events.length === 5);
    await user.until((r) => r.events.length === 3);
    expect(app.events.slice(3).map((e) => e.sessionId)).toEqual(["c", "a"]);
    expect(user.events[2]?.sessionId).toBe("a");
    // Resuming after the third event delivers only what followed it.
    const resumed = new TailRecorder(t().client, { appName, start: { case: "cursor", value: app.events[2]?.cursor as string } });
    await resumed.until((r) => r.caughtUp);
    expect(resumed.events.map((e) => [e.sessionId, Number(e.event?.seq)])).toEqual([
      ["c", 2],
      ["a", 2],
    ]);
    for (const tail of [user, app, resumed]) tail.cancel();
  });

  it("sends heartbeats on an idle stream, whose cursor resumes without duplicates", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    const tail = new TailRecorder(t().client, { appName: key.appName, heartbeatInterval: { seconds: 0n, nanos: 100_000_000 } });
    // An app-wide tail can see caught_up and heartbeats before the event when
    // another transaction in the cluster holds the watermark back; a heartbeat
    // sent then rightly resumes before the event. Count heartbeats after it.
    const heartbeatsAfterEvent = (r: TailRecorder) => {
      const at = r.responses.findIndex((x) => x.kind.case === "event");
      return at < 0 ? 0 : r.responses.slice(at).filter((x) => x.kind.case === "heartbeat").length;
    };
    await tail.until((r) => heartbeatsAfterEvent(r) >= 2);
    tail.cancel();
    expect(tail.events).toHaveLength(1);
    expect(tail.responses.at(-1)?.kind.case).toBe("heartbeat");
    const resumed = new TailRecorder(t().client, { appName: key.appName, start: { case: "cursor", value: tail.lastCursor as string } });
    await resumed.until((r) => r.caughtUp);
    expect(resumed.events).toEqual([]);
    resumed.cancel();
  });

  it("ends a tail with NOT_FOUND when its session is deleted, and refuses an unknown one", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    const tail = new TailRecorder(t().client, key);
    await tail.until((r) => r.caughtUp);
    await t().client.deleteSession(key);
    const err = await tail.done;
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    const unknown = new TailRecorder(t().client, { ...key, sessionId: "nope" });
    expect(((await unknown.done) as ConnectError).code).toBe(Code.NotFound);
    const foreign = new TailRecorder(t().client, { ...key, userId: "intruder" });
    expect(((await foreign.done) as ConnectError).code).toBe(Code.NotFound);
  });

  it("refuses malformed requests with INVALID_ARGUMENT", async () => {
    const appName = unique("app");
    await t().client.createSession({ appName, userId: "u1", sessionId: "s" });
    const call = (req: ConstructorParameters<typeof TailRecorder>[1]) => new TailRecorder(t().client, req).done;
    const codeOf = async (req: ConstructorParameters<typeof TailRecorder>[1]) => ((await call(req)) as ConnectError).code;
    expect(await codeOf({ appName: "" })).toBe(Code.InvalidArgument);
    expect(await codeOf({ appName, sessionId: "s" })).toBe(Code.InvalidArgument);
    expect(await codeOf({ appName, start: { case: "afterSeq", value: 1n } })).toBe(Code.InvalidArgument);
    expect(await codeOf({ appName, userId: "u1", sessionId: "s", start: { case: "afterSeq", value: -1n } })).toBe(Code.InvalidArgument);
    expect(await codeOf({ appName, start: { case: "cursor", value: "nonsense" } })).toBe(Code.InvalidArgument);
    expect(await codeOf({ appName, heartbeatInterval: { seconds: 0n, nanos: 1000 } })).toBe(Code.InvalidArgument);
    // A cursor is tied to its scope.
    const tail = new TailRecorder(t().client, { appName });
    await tail.until((r) => r.caughtUp);
    tail.cancel();
    expect(await codeOf({ appName, userId: "u1", start: { case: "cursor", value: tail.lastCursor as string } })).toBe(Code.InvalidArgument);
  });
});
