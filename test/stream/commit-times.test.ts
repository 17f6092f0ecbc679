import { describe, expect, it } from "vitest";
import type { LoggedEvent } from "../../src/storage/event-log.js";
import { CommitTimes } from "../../src/stream/commit-times.js";

const at = (sessionId: string, seq: bigint) => ({ appName: "a", userId: "u", sessionId, seq });
const logged = (sessionId: string, seq: bigint): LoggedEvent => ({
  ...at(sessionId, seq),
  sessionPk: 1n,
  position: { tx: 1n, pos: 0n },
  body: new Uint8Array(),
});

describe("CommitTimes", () => {
  it("times an event from its commit, but not for a tail opened after it", () => {
    const times = new CommitTimes();
    times.record([at("s", 1n), at("s", 2n)], 1000);
    expect(times.secondsSince(logged("s", 2n), 1250, 900)).toBe(0.25);
    expect(times.secondsSince(logged("s", 2n), 1250, 1001)).toBeUndefined();
    expect(times.secondsSince(logged("t", 2n), 1250, 900)).toBeUndefined();
  });

  it("drops the oldest entries past the horizon or the capacity, and keeps a reused key in commit order", () => {
    const times = new CommitTimes({ horizonMs: 100, capacity: 3 });
    times.record([at("s", 1n), at("s", 2n)], 0);
    times.record([at("s", 3n)], 50);
    times.record([at("s", 1n)], 60);
    // s/1 moved to the end: s/2 is now the oldest and goes first.
    times.record([at("s", 4n)], 70);
    expect(times.size).toBe(3);
    expect(times.secondsSince(logged("s", 2n), 80, 0)).toBeUndefined();
    expect(times.secondsSince(logged("s", 1n), 80, 0)).toBeCloseTo(0.02);
    // At 155, s/3 (committed at 50) is past the 100 ms horizon.
    times.record([at("s", 5n)], 155);
    expect(times.secondsSince(logged("s", 3n), 160, 0)).toBeUndefined();
    expect(times.size).toBe(3);
  });
});
