import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { TailRecorder } from "../support/tail.js";

describeContract("StreamEvents resources", (t) => {
  it("holds no stream resources after 1,000 tails are opened and cancelled", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    const feed = t().server.streams.feed;
    const before = { subscribers: feed.subscriberCount, timers: feed.timerCount };

    const tails: TailRecorder[] = [];
    for (let i = 0; i < 1000; i++) {
      const scope = i % 3 === 0 ? key : i % 3 === 1 ? { appName, userId: "u1" } : { appName };
      tails.push(new TailRecorder(t().client, { ...scope, heartbeatInterval: { seconds: 1n } }));
    }
    // Every tail is registered and live before any is cancelled.
    for (const tail of tails) await tail.until((r) => r.caughtUp, 60_000);
    expect(feed.subscriberCount).toBe(before.subscribers + 1000);
    // A live event reaches all of them through one feed read.
    await t().client.appendEvent({ ...key, event: { author: "agent" } });
    for (const tail of tails) await tail.until((r) => r.events.some((e) => e.event?.seq === 2n), 60_000);

    for (const tail of tails) tail.cancel();
    const outcomes = await Promise.all(tails.map((tail) => tail.done));
    for (const err of outcomes) expect((err as { code?: Code }).code).toBe(Code.Canceled);
    // The server notices each cancellation asynchronously; wait for the count, not for time.
    const deadline = Date.now() + 30_000;
    while (feed.subscriberCount > before.subscribers && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(feed.subscriberCount).toBe(before.subscribers);
    expect(feed.timerCount).toBe(before.timers);
  });
});

describeContract(
  "StreamEvents slow consumers",
  (t) => {
    it("gives a slow consumer every event once, in order, while holding a bounded buffer", async () => {
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      const overflowsBefore = t().server.streams.feed.overflows;
      const received: bigint[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const controller = new AbortController();
      let caughtUp!: () => void;
      const isCaughtUp = new Promise<void>((resolve) => {
        caughtUp = resolve;
      });
      const consumer = (async () => {
        for await (const res of t().client.streamEvents({ appName: key.appName }, { signal: controller.signal })) {
          if (res.kind.case === "caughtUp") {
            caughtUp();
            // Stop reading while the writers run: HTTP/2 flow control pushes back, the tail's buffer overflows.
            await gate;
          }
          if (res.kind.case === "event") received.push(res.kind.value.event?.seq ?? 0n);
          if (received.length === 400) return;
        }
      })();
      await isCaughtUp;
      for (let i = 0; i < 400; i++)
        await t().client.appendEvent({
          ...key,
          event: { author: "user", content: { parts: [{ data: { case: "text", value: "x".repeat(16_000) } }] } },
        });
      release();
      await consumer;
      controller.abort();
      expect(received).toEqual(Array.from({ length: 400 }, (_, i) => BigInt(i + 1)));
      // The buffer of 8 did overflow: the tail re-read from the table instead of growing.
      expect(t().server.streams.feed.overflows).toBeGreaterThan(overflowsBefore);
    });
  },
  { tailBuffer: 8 },
);
