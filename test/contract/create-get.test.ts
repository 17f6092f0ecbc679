import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describeContract("CreateSession and GetSession", (t) => {
  it("generates a UUID when no id is given, or an empty one", async () => {
    const appName = unique("app");
    const a = await t().client.createSession({ appName, userId: "u1" });
    const b = await t().client.createSession({ appName, userId: "u1", sessionId: "" });
    expect(a.session?.id).toMatch(UUID);
    expect(b.session?.id).toMatch(UUID);
    expect(a.session?.id).not.toBe(b.session?.id);
    expect(a.session?.revision).toBe(0n);
    expect(a.session?.events).toEqual([]);
    expect(a.session?.lastUpdateTime).toEqual(a.session?.createTime);
  });

  it("keeps a caller-chosen id and refuses it a second time with ALREADY_EXISTS", async () => {
    const appName = unique("app");
    const created = await t().client.createSession({ appName, userId: "u1", sessionId: "s1", state: { n: 1 } });
    expect(created.session?.id).toBe("s1");
    await expectCode(t().client.createSession({ appName, userId: "u1", sessionId: "s1", state: { n: 2 } }), Code.AlreadyExists, /s1/);
    const got = await t().client.getSession({ appName, userId: "u1", sessionId: "s1" });
    expect(got.session?.state).toEqual({ n: 1 });
  });

  it("keeps a given create_time (an imported session), which later events move forward only", async () => {
    const appName = unique("app");
    const createTime = { seconds: 1_700_000_000n, nanos: 123_456_000 };
    const created = await t().client.createSession({ appName, userId: "u1", sessionId: "old", createTime });
    expect(created.session?.createTime).toMatchObject(createTime);
    expect(created.session?.lastUpdateTime).toMatchObject(createTime);
    const eventTime = { seconds: 1_700_000_100n, nanos: 5 };
    await t().client.appendEvent({ appName, userId: "u1", sessionId: "old", event: { author: "user", timestamp: eventTime } });
    const got = await t().client.getSession({ appName, userId: "u1", sessionId: "old" });
    expect(got.session?.createTime).toMatchObject(createTime);
    expect(got.session?.lastUpdateTime).toMatchObject(eventTime);
    await expectCode(
      t().client.createSession({ appName, userId: "u1", createTime: { seconds: 1_700_000_000n, nanos: -1 } }),
      Code.InvalidArgument,
      /create_time/,
    );
    await expectCode(
      t().client.createSession({ appName, userId: "u1", createTime: { seconds: -10_000_000_000n, nanos: 0 } }),
      Code.InvalidArgument,
      /create_time must be from 1677/,
    );
  });

  it("gives racing creates of one id exactly one winner", async () => {
    const appName = unique("app");
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        t().client.createSession({ appName, userId: "u1", sessionId: "race", state: { by: i, "user:by": i } }),
      ),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") expect((r.reason as { code: Code }).code).toBe(Code.AlreadyExists);
    }
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<ReturnType<typeof t>["client"]["createSession"]>>>).value;
    const got = await t().client.getSession({ appName, userId: "u1", sessionId: "race" });
    expect(got.session?.state).toEqual(winner.session?.state);
    // The losers' user-scoped writes were rolled back with them.
    const user = await t().client.getUserState({ appName, userId: "u1" });
    expect(user.state).toEqual({ by: winner.session?.state?.by });
  });

  it("lets two users hold the same session id without seeing each other", async () => {
    const appName = unique("app");
    await t().client.createSession({ appName, userId: "alice", sessionId: "same", state: { owner: "alice" } });
    await t().client.createSession({ appName, userId: "bob", sessionId: "same", state: { owner: "bob" } });
    const alice = await t().client.getSession({ appName, userId: "alice", sessionId: "same" });
    const bob = await t().client.getSession({ appName, userId: "bob", sessionId: "same" });
    expect(alice.session?.state).toEqual({ owner: "alice" });
    expect(bob.session?.state).toEqual({ owner: "bob" });
  });

  it("splits the initial state into session, user and app scopes and never stores temp:", async () => {
    const appName = unique("app");
    const created = await t().client.createSession({
      appName,
      userId: "u1",
      sessionId: "s1",
      state: { plain: 1, "app:shared": "all", "user:pref": "metric", "temp:scratch": "gone" },
    });
    const expected = { plain: 1, "app:shared": "all", "user:pref": "metric" };
    expect(created.session?.state).toEqual(expected);
    const got = await t().client.getSession({ appName, userId: "u1", sessionId: "s1" });
    expect(got.session?.state).toEqual(expected);
    expect((await t().client.getUserState({ appName, userId: "u1" })).state).toEqual({ pref: "metric" });

    // Another session of the same user sees user: and app:, not the session's keys.
    const sibling = await t().client.createSession({ appName, userId: "u1" });
    expect(sibling.session?.state).toEqual({ "app:shared": "all", "user:pref": "metric" });
    // Another user sees only app:.
    const stranger = await t().client.createSession({ appName, userId: "u2" });
    expect(stranger.session?.state).toEqual({ "app:shared": "all" });
    // Another app sees nothing.
    const elsewhere = await t().client.createSession({ appName: unique("app"), userId: "u1" });
    expect(elsewhere.session?.state).toEqual({});
  });

  it("answers NOT_FOUND for a missing session and for another user's session", async () => {
    const appName = unique("app");
    await t().client.createSession({ appName, userId: "owner", sessionId: "mine" });
    await expectCode(t().client.getSession({ appName, userId: "owner", sessionId: "nope" }), Code.NotFound);
    const wrongUser = await expectCode(t().client.getSession({ appName, userId: "intruder", sessionId: "mine" }), Code.NotFound);
    const missing = await expectCode(t().client.getSession({ appName, userId: "intruder", sessionId: "nope" }), Code.NotFound);
    // Same shape of answer either way: existence does not leak.
    expect(wrongUser.rawMessage.replace("mine", "X")).toBe(missing.rawMessage.replace("nope", "X"));
  });

  it("windows the events: unset = all, 0 = none, N = the N most recent oldest first, after_timestamp inclusive", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", sessionId: "w" };
    await t().client.createSession(key);
    for (let i = 1; i <= 6; i++) {
      await t().client.appendEvent({ ...key, event: { author: "user", timestamp: { seconds: BigInt(1000 + i), nanos: 500 } } });
    }
    const seqs = async (window: { numRecentEvents?: number; afterTimestamp?: { seconds: bigint; nanos: number } }) =>
      (await t().client.getSession({ ...key, ...window })).session?.events.map((e) => Number(e.seq));
    expect(await seqs({})).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqs({ numRecentEvents: 0 })).toEqual([]);
    expect(await seqs({ numRecentEvents: 2 })).toEqual([5, 6]);
    expect(await seqs({ numRecentEvents: 60 })).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqs({ afterTimestamp: { seconds: 1004n, nanos: 500 } })).toEqual([4, 5, 6]);
    expect(await seqs({ afterTimestamp: { seconds: 1004n, nanos: 501 } })).toEqual([5, 6]);
    expect(await seqs({ afterTimestamp: { seconds: 1002n, nanos: 0 }, numRecentEvents: 2 })).toEqual([5, 6]);
    expect(await seqs({ afterTimestamp: { seconds: 1005n, nanos: 500 }, numRecentEvents: 5 })).toEqual([5, 6]);
    await expectCode(t().client.getSession({ ...key, numRecentEvents: -1 }), Code.InvalidArgument, /num_recent_events/);
    // The window changes the events, never the state or revision.
    const windowed = await t().client.getSession({ ...key, numRecentEvents: 0 });
    expect(windowed.session?.revision).toBe(6n);
  });

  it("reports create_time and last_update_time to the nanosecond", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", sessionId: "times" };
    const created = await t().client.createSession(key);
    const ts = { seconds: 1_900_000_000n, nanos: 123_456_789 };
    await t().client.appendEvent({ ...key, event: { author: "user", timestamp: ts } });
    const got = await t().client.getSession(key);
    expect(got.session?.lastUpdateTime).toEqual(expect.objectContaining(ts));
    expect(got.session?.createTime).toEqual(created.session?.createTime);
  });
});
