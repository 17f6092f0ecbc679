import pg from "pg";
import { expect, it } from "vitest";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { TailRecorder } from "../support/tail.js";

describeContract("StreamEvents from_now", (t, backend) => {
  const ids = (tail: TailRecorder) => tail.events.map((e) => e.event?.invocationId);

  it("delivers only what commits after the call, also while an older transaction holds the watermark back", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    // On PostgreSQL the wide tails' watermark is the oldest running
    // transaction: one that took its id before the appends below and is still
    // open keeps them above the watermark although they are committed.
    const older = backend.name === "postgres" ? new pg.Client({ connectionString: t().database.url }) : undefined;
    let tails: TailRecorder[] = [];
    try {
      if (older) {
        await older.connect();
        await older.query("BEGIN");
        await older.query("SELECT pg_current_xact_id()");
      }
      for (let i = 0; i < 3; i++) await t().client.appendEvent({ ...key, event: { author: "user", invocationId: `before${i}` } });
      const fromNow = { start: { case: "fromNow" as const, value: {} } };
      tails = [
        new TailRecorder(t().client, { appName, ...fromNow }),
        new TailRecorder(t().client, { appName, userId: key.userId, ...fromNow }),
        new TailRecorder(t().client, { ...key, ...fromNow }),
      ];
      await Promise.all(tails.map((tail) => tail.until((r) => r.caughtUp)));
    } finally {
      await older?.query("COMMIT");
      await older?.end();
    }
    for (let i = 0; i < 2; i++) await t().client.appendEvent({ ...key, event: { author: "user", invocationId: `after${i}` } });
    await t().client.appendEvent({ ...key, event: { author: "user", invocationId: "marker" } });
    const hasMarker = (r: TailRecorder) => ids(r).includes("marker");
    for (const tail of tails) {
      await tail.until(hasMarker);
      expect(ids(tail)).toEqual(["after0", "after1", "marker"]);
    }
    // The caught_up cursor of a live-only wide tail resumes at the same place.
    const [app] = tails;
    const caughtUp = app?.responses.find((r) => r.kind.case === "caughtUp");
    const resumed = new TailRecorder(t().client, { appName, start: { case: "cursor", value: caughtUp?.kind.value?.cursor as string } });
    await resumed.until(hasMarker);
    expect(ids(resumed)).toEqual(["after0", "after1", "marker"]);
    for (const tail of [...tails, resumed]) tail.cancel();
  });
});
