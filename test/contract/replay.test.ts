import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

// The expected states are computed here, from what the test sent, with plain
// object spreads: independent of the server's fold (applyDelta) and of the
// stored rows.
function withoutTemp(state: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(state).filter(([k]) => !k.startsWith("temp:")));
}

/** A deterministic sequence of deltas over every scope, with nulls, nesting, replacements and empty deltas. */
function deltaFor(i: number): JsonObject | undefined {
  if (i % 7 === 3) return undefined;
  const delta: Record<string, JsonValue> = {};
  delta[`k${i % 4}`] = i % 5 === 0 ? null : { step: i, nested: { list: [i, `v${i}`] } };
  if (i % 3 === 0) delta["user:seen"] = i;
  if (i % 4 === 1) delta["app:last"] = `app-${i}`;
  if (i % 2 === 0) delta["temp:scratch"] = i;
  if (i === 6) delta.plain = "replaced";
  return delta;
}

describeContract("GetSession as_of_seq (state replay)", (t) => {
  it("returns the create-time state folded with the deltas up to each seq, exactly", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s1" };
    const initial = { plain: 1, "user:tier": "gold", "app:flag": true, "temp:once": "dropped", gone: null };
    await t().client.createSession({ ...key, state: initial });
    const expected: JsonObject[] = [withoutTemp(initial)];
    const N = 24;
    for (let i = 1; i <= N; i++) {
      const delta = deltaFor(i);
      await t().client.appendEvent({ ...key, event: { author: i % 2 ? "user" : "agent", actions: delta ? { stateDelta: delta } : {} } });
      expected.push({ ...(expected[i - 1] as JsonObject), ...withoutTemp(delta ?? {}) });
    }
    for (let seq = 0; seq <= N; seq++) {
      const got = await t().client.getSession({ ...key, asOfSeq: BigInt(seq), numRecentEvents: 0 });
      expect(got.session?.state, `after event ${seq}`).toEqual(expected[seq]);
      expect(got.session?.revision).toBe(BigInt(seq));
      expect(got.session?.events).toEqual([]);
    }
    // With no other session writing the shared scopes, the last step is the live state.
    const live = await t().client.getSession({ ...key, numRecentEvents: 0 });
    expect(live.session?.state).toEqual(expected[N]);
  });

  it("keeps the create-time state as redacted, and the live state moving does not change it", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s1" };
    await t().client.createSession({ ...key, state: { contact: "ada@example.com", n: 1 } });
    await t().client.appendEvent({ ...key, event: { author: "agent", actions: { stateDelta: { n: 2, contact: "none" } } } });
    const zero = await t().client.getSession({ ...key, asOfSeq: 0n });
    expect(zero.session?.state).toEqual({ contact: "[EMAIL]", n: 1 });
    const one = await t().client.getSession({ ...key, asOfSeq: 1n });
    expect(one.session?.state).toEqual({ contact: "none", n: 2 });
  });

  it("shows app: and user: keys as this session wrote them, not later writes by other sessions", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", sessionId: "mine" };
    await t().client.createSession({ ...key, state: { "app:mode": "a", "user:lang": "en" } });
    await t().client.appendEvent({ ...key, event: { author: "agent", actions: { stateDelta: { "user:lang": "de" } } } });
    const other = { appName, userId: "u1", sessionId: "other" };
    await t().client.createSession(other);
    await t().client.appendEvent({ ...other, event: { author: "agent", actions: { stateDelta: { "app:mode": "b", "user:extra": 1 } } } });

    const live = await t().client.getSession({ ...key, numRecentEvents: 0 });
    expect(live.session?.state).toEqual({ "app:mode": "b", "user:lang": "de", "user:extra": 1 });
    const replayed = await t().client.getSession({ ...key, asOfSeq: 1n, numRecentEvents: 0 });
    expect(replayed.session?.state).toEqual({ "app:mode": "a", "user:lang": "de" });
  });

  it("takes the events from 1..as_of_seq, with the window applied to them", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s1" };
    await t().client.createSession(key);
    for (let i = 1; i <= 8; i++) {
      await t().client.appendEvent({ ...key, event: { author: "agent", invocationId: `i${i}`, actions: { stateDelta: { i } } } });
    }
    const all = await t().client.getSession({ ...key, asOfSeq: 5n });
    expect(all.session?.events.map((e) => e.seq)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(all.session?.state).toEqual({ i: 5 });
    const recent = await t().client.getSession({ ...key, asOfSeq: 5n, numRecentEvents: 2 });
    expect(recent.session?.events.map((e) => e.invocationId)).toEqual(["i4", "i5"]);
    const since = all.session?.events[3]?.timestamp;
    const after = await t().client.getSession({ ...key, asOfSeq: 5n, afterTimestamp: since });
    expect(after.session?.events.map((e) => e.seq)).toEqual([4n, 5n]);
    const none = await t().client.getSession({ ...key, asOfSeq: 0n });
    expect(none.session?.events).toEqual([]);
    expect(none.session?.state).toEqual({});
  });

  it("refuses a seq past the last event or below zero, and a missing session", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s1" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "agent" } });
    await expectCode(t().client.getSession({ ...key, asOfSeq: 2n }), Code.InvalidArgument, /as_of_seq 2 is past .*\(seq 1\)/);
    await expectCode(t().client.getSession({ ...key, asOfSeq: -1n }), Code.InvalidArgument, /as_of_seq must not be negative/);
    await expectCode(t().client.getSession({ ...key, sessionId: "nope", asOfSeq: 0n }), Code.NotFound);
    await expectCode(t().client.getSession({ ...key, userId: "u2", asOfSeq: 0n }), Code.NotFound);
  });

  it("refuses to replay a session created before create-time state was kept", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "old" };
    await t().client.createSession({ ...key, state: { x: 1 } });
    await t().client.appendEvent({ ...key, event: { author: "agent", actions: { stateDelta: { x: 2 } } } });
    // What migration 0005 leaves on rows that existed before it.
    await sql`UPDATE sessions SET initial_state = NULL WHERE app_name = ${key.appName}`.execute(t().database.db);
    await expectCode(t().client.getSession({ ...key, asOfSeq: 1n }), Code.FailedPrecondition, /created before .* cannot be replayed/);
    // Everything else about the session still reads.
    const live = await t().client.getSession(key);
    expect(live.session?.state).toEqual({ x: 2 });
  });
});
