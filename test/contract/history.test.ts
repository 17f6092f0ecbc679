import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { TailRecorder } from "../support/tail.js";

const USER = "u1";

describeContract("ForkSession and RewindSession", (t) => {
  /** A session created with state, then one event per invocation, each with a delta. */
  const seedSession = async (created: JsonObject, invocations: [string, JsonObject][]) => {
    const appName = unique("app");
    const { session } = await t().client.createSession({ appName, userId: USER, state: created });
    const sessionId = session?.id as string;
    for (const [invocationId, stateDelta] of invocations) {
      await t().client.appendEvent({ appName, userId: USER, sessionId, event: { author: "agent", invocationId, actions: { stateDelta } } });
    }
    return { appName, sessionId, key: { appName, userId: USER, sessionId } };
  };
  const read = async (key: { appName: string; userId: string; sessionId: string }) => {
    const { session } = await t().client.getSession(key);
    if (!session) throw new Error("no session");
    return session;
  };

  it("forks every event: same events, same session state, shared state untouched, origin recorded", async () => {
    const { key, sessionId } = await seedSession({ plan: "basic", "user:tier": "gold", "app:motd": "hi" }, [
      ["inv-1", { a: 1, "user:tier": "silver" }],
      ["inv-2", { b: [1, 2], a: null }],
    ]);
    const source = await read(key);
    const { session: fork } = await t().client.forkSession({ ...key, newSessionId: "my-fork" });
    expect(fork?.id).toBe("my-fork");
    expect(fork?.forkedFrom).toMatchObject({ sessionId, seq: 2n });
    expect(fork?.revision).toBe(2n);
    expect(fork?.events).toEqual([]);
    const stored = await read({ ...key, sessionId: "my-fork" });
    expect(stored.state).toEqual(source.state);
    expect(stored.events).toEqual(source.events);
    expect(stored.forkedFrom).toMatchObject({ sessionId, seq: 2n });
    // The source is as it was, and knows nothing of the fork.
    const after = await read(key);
    expect(after).toEqual(source);
    expect(after.forkedFrom).toBeUndefined();
  });

  it("forks up to a seq: the fork starts as the session was right after that event, then goes its own way", async () => {
    const { key, sessionId } = await seedSession({ plan: "basic", keep: true }, [
      ["inv-1", { a: 1, plan: "pro" }],
      ["inv-2", { b: 2, "user:x": 1 }],
      ["inv-3", { a: 3 }],
    ]);
    const { session: fork } = await t().client.forkSession({ ...key, upToSeq: 1n });
    const forkKey = { ...key, sessionId: fork?.id as string };
    expect(fork?.id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await read(forkKey);
    expect(stored.events.map((e) => [e.seq, e.invocationId])).toEqual([[1n, "inv-1"]]);
    // Session scope from the log; user: state is shared and is what it is now.
    expect(stored.state).toEqual({ plan: "pro", keep: true, a: 1, "user:x": 1 });
    expect(stored.revision).toBe(1n);
    // Replaying the fork gives the source's history up to the fork point.
    const asOf0 = await t().client.getSession({ ...forkKey, asOfSeq: 0n });
    expect(asOf0.session?.state).toEqual({ plan: "basic", keep: true });
    // The fork appends after its last copied event; the source does not move.
    const appended = await t().client.appendEvent({ ...forkKey, event: { author: "user", actions: { stateDelta: { c: 1 } } } });
    expect(appended.event?.seq).toBe(2n);
    expect((await read(key)).events).toHaveLength(3);
    expect((await read(forkKey)).state).toMatchObject({ a: 1, c: 1 });
    // A fork of nothing has the create-time session state.
    const { session: empty } = await t().client.forkSession({ ...key, upToSeq: 0n, newSessionId: "" });
    const emptyRead = await read({ ...key, sessionId: empty?.id as string });
    expect(emptyRead.events).toEqual([]);
    expect(emptyRead.state).toEqual({ plan: "basic", keep: true, "user:x": 1 });
    expect(emptyRead.forkedFrom).toMatchObject({ sessionId, seq: 0n });
  });

  it("delivers a fork's copies and a rewind to live tails of the app", async () => {
    const { key, appName } = await seedSession({}, [
      ["inv-1", { a: 1 }],
      ["inv-2", { a: 2 }],
    ]);
    const tail = new TailRecorder(t().client, { appName, start: { case: "fromNow", value: {} } });
    try {
      await tail.until((r) => r.caughtUp);
      await t().client.forkSession({ ...key, newSessionId: "copy" });
      await t().client.rewindSession({ ...key, sessionId: "copy", rewindBeforeInvocationId: "inv-2" });
      const copies = (r: TailRecorder) => r.events.filter((e) => e.sessionId === "copy");
      await tail.until((r) => copies(r).length >= 3);
      expect(copies(tail).map((e) => [e.event?.seq, e.event?.invocationId.startsWith("e-") ? "rewind" : e.event?.invocationId])).toEqual([
        [1n, "inv-1"],
        [2n, "inv-2"],
        [3n, "rewind"],
      ]);
    } finally {
      tail.cancel();
    }
  });

  it("refuses bad forks with a clear status and writes nothing", async () => {
    const { key, appName } = await seedSession({}, [["inv-1", { a: 1 }]]);
    await t().client.createSession({ appName, userId: USER, sessionId: "taken" });
    await expectCode(t().client.forkSession({ ...key, sessionId: "missing" }), Code.NotFound);
    await expectCode(t().client.forkSession({ ...key, userId: "someone-else" }), Code.NotFound);
    await expectCode(
      t().client.forkSession({ ...key, upToSeq: 2n }),
      Code.InvalidArgument,
      /up_to_seq 2 is past the session's last event \(seq 1\)/,
    );
    await expectCode(t().client.forkSession({ ...key, upToSeq: -1n }), Code.InvalidArgument, /up_to_seq must not be negative/);
    await expectCode(t().client.forkSession({ ...key, newSessionId: " padded" }), Code.InvalidArgument, /new_session_id/);
    await expectCode(t().client.forkSession({ ...key, newSessionId: "taken" }), Code.AlreadyExists, /taken/);
    const listed = await t().client.listSessions({ appName, userId: USER });
    expect(listed.sessions.map((s) => s.id).sort()).toEqual([key.sessionId, "taken"].sort());
    expect((await read({ ...key, sessionId: "taken" })).events).toEqual([]);
  });

  it("rewinds to before an invocation from the whole log: create-time keys come back, later keys become null, shared state stays", async () => {
    const { key } = await seedSession({ plan: "basic", "user:tier": "gold" }, [
      ["inv-1", { a: 1 }],
      ["inv-2", { plan: "pro", a: 2, b: "new", "user:tier": "platinum", "app:flag": true }],
      ["inv-3", { c: { deep: [1] } }],
    ]);
    const res = await t().client.rewindSession({ ...key, rewindBeforeInvocationId: "inv-2" });
    expect(res.revision).toBe(4n);
    const event = res.event;
    expect(event?.author).toBe("user");
    expect(event?.invocationId).toMatch(/^e-[0-9a-f-]{36}$/);
    expect(event?.seq).toBe(4n);
    expect(event?.actions?.rewindBeforeInvocationId).toBe("inv-2");
    expect(event?.actions?.stateDelta).toEqual({ plan: "basic", a: 1, b: null, c: null });
    const stored = await read(key);
    expect(stored.state).toEqual({ plan: "basic", a: 1, b: null, c: null, "user:tier": "platinum", "app:flag": true });
    expect(stored.events.at(-1)).toEqual(event);
    // Rewinding to the first invocation gives the create-time state back.
    await t().client.rewindSession({ ...key, rewindBeforeInvocationId: "inv-1" });
    expect((await read(key)).state).toEqual({ plan: "basic", a: null, b: null, c: null, "user:tier": "platinum", "app:flag": true });
  });

  it("writes an empty delta when nothing changed since the invocation", async () => {
    const { key } = await seedSession({ k: 1 }, [["inv-1", {}]]);
    const res = await t().client.rewindSession({ ...key, rewindBeforeInvocationId: "inv-1" });
    expect(res.event?.actions?.stateDelta ?? {}).toEqual({});
    expect((await read(key)).state).toEqual({ k: 1 });
  });

  it("refuses bad rewinds with a clear status and writes nothing", async () => {
    const { key } = await seedSession({}, [["inv-1", { a: 1 }]]);
    await expectCode(t().client.rewindSession({ ...key, sessionId: "missing", rewindBeforeInvocationId: "inv-1" }), Code.NotFound);
    await expectCode(t().client.rewindSession({ ...key, rewindBeforeInvocationId: "nope" }), Code.InvalidArgument, /"nope" names no event/);
    await expectCode(
      t().client.rewindSession({ ...key, rewindBeforeInvocationId: "" }),
      Code.InvalidArgument,
      /rewind_before_invocation_id/,
    );
    await expectCode(
      t().client.rewindSession({ ...key, rewindBeforeInvocationId: "inv-1", expectedRevision: 0n }),
      Code.Aborted,
      /expected revision 0, current revision 1/,
    );
    const stored = await read(key);
    expect(stored.revision).toBe(1n);
    expect(stored.state).toEqual({ a: 1 });
    const ok = await t().client.rewindSession({ ...key, rewindBeforeInvocationId: "inv-1", expectedRevision: 1n });
    expect(ok.revision).toBe(2n);
  });
});
