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
      const feed = t().server.streams.feed;
      const overflowsBefore = feed.overflows;
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
      let total = Number.POSITIVE_INFINITY;
      const consumer = (async () => {
        for await (const res of t().client.streamEvents({ appName: key.appName }, { signal: controller.signal })) {
          if (res.kind.case === "caughtUp") {
            caughtUp();
            // Stop reading while the writers run: HTTP/2 flow control pushes back, the tail's buffer overflows.
            await gate;
          }
          if (res.kind.case === "event") received.push(res.kind.value.event?.seq ?? 0n);
          if (received.length === total) return;
        }
      })();
      await isCaughtUp;
      // How much the transport holds before it pushes back differs between
      // Node.js lines (several MB here): write until the tail's buffer of 8
      // has overflowed, and a while longer, rather than a fixed amount.
      let appended = 0;
      let extra = 0;
      while (extra < 50) {
        if (appended === 2000) throw new Error(`no overflow after ${appended} events of 16 kB: the tail's buffer is not bounded`);
        await t().client.appendEvent({
          ...key,
          event: { author: "user", content: { parts: [{ data: { case: "text", value: "x".repeat(16_000) } }] } },
        });
        appended++;
        if (feed.overflows > overflowsBefore) extra++;
      }
      total = appended;
      release();
      await consumer;
      controller.abort();
      expect(received).toEqual(Array.from({ length: appended }, (_, i) => BigInt(i + 1)));
    });
  },
  { tailBuffer: 8 },
);
