import { expect, it } from "vitest";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";

describeContract("concurrency", (t) => {
  it("gives many parallel appends to one session a gapless seq", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "hot" };
    await t().client.createSession(key);
    const writers = 64;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        t().client.appendEvent({
          ...key,
          event: { author: `w${i}`, actions: { stateDelta: { [`k${i}`]: i, last: i, "user:n": i, "app:n": i } } },
        }),
      ),
    );
    const seqs = results.map((r) => Number(r.event?.seq)).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
    const session = (await t().client.getSession(key)).session;
    expect(session?.revision).toBe(BigInt(writers));
    expect(session?.events.map((e) => Number(e.seq))).toEqual(seqs);
    // Each writer's own key landed; "last" holds the delta of the highest seq.
    for (let i = 0; i < writers; i++) expect(session?.state?.[`k${i}`]).toBe(i);
    const lastWriter = session?.events[writers - 1]?.author.slice(1);
    expect(session?.state?.last).toBe(Number(lastWriter));
    expect(session?.state?.["user:n"]).toBe(Number(lastWriter));
  });

  it("keeps seq gapless per session while sessions are written in parallel", async () => {
    const appName = unique("app");
    const sessions = ["a", "b", "c", "d"];
    for (const sessionId of sessions) await t().client.createSession({ appName, userId: "u1", sessionId });
    await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        t().client.appendEvent({ appName, userId: "u1", sessionId: sessions[i % 4] as string, event: { author: "user" } }),
      ),
    );
    for (const sessionId of sessions) {
      const events = (await t().client.getSession({ appName, userId: "u1", sessionId })).session?.events ?? [];
      expect(events.map((e) => Number(e.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    }
  });

  it("lets racing first writes of a user's and an app's state all land", async () => {
    const appName = unique("app");
    const ids = Array.from({ length: 16 }, (_, i) => `s${i}`);
    await Promise.all(ids.map((sessionId) => t().client.createSession({ appName, userId: "u1", sessionId })));
    await Promise.all(
      ids.map((sessionId, i) =>
        t().client.appendEvent({
          appName,
          userId: "u1",
          sessionId,
          event: { author: "a", actions: { stateDelta: { [`user:${i}`]: i, [`app:${i}`]: i } } },
        }),
      ),
    );
    const user = (await t().client.getUserState({ appName, userId: "u1" })).state ?? {};
    expect(Object.keys(user).sort()).toEqual(ids.map((_, i) => String(i)).sort());
    // App state has no RPC of its own: a session of another user shows it.
    const other = (await t().client.createSession({ appName, userId: "u2", sessionId: "probe" })).session?.state ?? {};
    expect(Object.keys(other).sort()).toEqual(ids.map((_, i) => `app:${i}`).sort());
  });

  it("stores an event once when the same id is appended concurrently", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "dup" };
    await t().client.createSession(key);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        t().client.appendEvent({ ...key, event: { id: "once", author: "user", actions: { stateDelta: { n: 1 } } } }),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.event?.seq))).toEqual(new Set([1n]));
    expect((await t().client.getSession(key)).session?.revision).toBe(1n);
  });

  it("lets exactly one of several writers holding the same revision win", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "stale" };
    await t().client.createSession(key);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => t().client.appendEvent({ ...key, event: { author: `w${i}` }, expectedRevision: 0n })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await t().client.getSession(key)).session?.revision).toBe(1n);
  });
});
