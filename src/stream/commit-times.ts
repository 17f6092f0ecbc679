import type { LoggedEvent } from "../storage/event-log.js";
import type { CommittedEvent } from "../storage/store-observer.js";

/** How long, and for how many events, a commit time is kept for its deliveries. */
export interface CommitTimesOptions {
  horizonMs: number;
  capacity: number;
}

const DEFAULTS: CommitTimesOptions = { horizonMs: 5 * 60_000, capacity: 100_000 };

/**
 * When this process's appends were acknowledged by the database, kept for a
 * while so that each tail that delivers one of those events can say how long
 * it took (the feed lag). Only events committed here are known: the log
 * stores no commit time, and an event's own timestamp is the client's. Kept
 * only while tails are open (the hub checks), in commit order, so the oldest
 * entries are dropped first; an event delivered after its entry is gone is
 * not timed (a tail that far behind shows in the overflow counter).
 */
export class CommitTimes {
  readonly #times = new Map<string, number>();
  readonly #options: CommitTimesOptions;

  constructor(options: Partial<CommitTimesOptions> = {}) {
    this.#options = { ...DEFAULTS, ...options };
  }

  get size(): number {
    return this.#times.size;
  }

  /** `events` were acknowledged at `at` (performance.now()). */
  record(events: readonly CommittedEvent[], at: number): void {
    for (const e of events) {
      const k = key(e.appName, e.userId, e.sessionId, e.seq);
      // A session deleted and made again reuses seqs: move the entry to the end, keeping commit order.
      this.#times.delete(k);
      this.#times.set(k, at);
    }
    const oldest = at - this.#options.horizonMs;
    for (const [k, t] of this.#times) {
      if (t >= oldest && this.#times.size <= this.#options.capacity) break;
      this.#times.delete(k);
    }
  }

  /**
   * Seconds from the event's commit to `at`, when this process committed it
   * recently and not before `opened`: a tail opened later reads the event as
   * history, which is not lag.
   */
  secondsSince(event: LoggedEvent, at: number, opened: number): number | undefined {
    if (this.#times.size === 0) return undefined;
    const committed = this.#times.get(key(event.appName, event.userId, event.sessionId, event.seq));
    return committed === undefined || committed < opened ? undefined : Math.max(0, at - committed) / 1000;
  }

  clear(): void {
    this.#times.clear();
  }
}

function key(appName: string, userId: string, sessionId: string, seq: bigint): string {
  return `${appName}\u0000${userId}\u0000${sessionId}\u0000${seq}`;
}
