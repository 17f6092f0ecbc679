import type { LoggedEvent } from "../storage/event-log.js";
import type { LogPosition } from "../storage/log-position.js";
import type { FeedFilter, FeedSubscriber } from "./feed.js";

export type Signal =
  | { kind: "event"; event: LoggedEvent }
  /** Events were dropped (queue full) or notifications lost: re-read from the table. */
  | { kind: "resync" }
  | { kind: "deleted" }
  | { kind: "idle" }
  | { kind: "aborted" };

/**
 * One tail's mailbox. Memory is bounded: past `capacity` queued events the
 * queue is dropped and the tail told to re-read from the table, which holds
 * everything; nothing is lost, the slow tail just pays for its own reads.
 */
export class Subscription implements FeedSubscriber {
  readonly filter: FeedFilter;
  readonly #capacity: number;
  #queue: LoggedEvent[] = [];
  #resync = false;
  #deleted = false;
  #feedPosition: LogPosition | undefined;
  #wake: (() => void) | undefined;

  readonly #onOverflow: () => void;

  constructor(filter: FeedFilter, capacity: number, onOverflow: () => void = () => {}) {
    this.filter = filter;
    this.#capacity = capacity;
    this.#onOverflow = onOverflow;
  }

  push(event: LoggedEvent): void {
    if (this.#resync) return;
    if (this.#queue.length >= this.#capacity) {
      this.#queue = [];
      this.#resync = true;
      this.#onOverflow();
    } else {
      this.#queue.push(event);
    }
    this.#notify();
  }

  progress(position: LogPosition): void {
    this.#feedPosition = position;
  }

  reset(): void {
    this.#queue = [];
    this.#resync = true;
    this.#notify();
  }

  deleted(): void {
    this.#deleted = true;
    this.#notify();
  }

  /** Where the feed has read to, when nothing is queued: everything up to it was delivered. */
  get settledPosition(): LogPosition | undefined {
    return this.#queue.length === 0 && !this.#resync ? this.#feedPosition : undefined;
  }

  get isDeleted(): boolean {
    return this.#deleted;
  }

  /** Starts a fresh read from the table: queued events are either before it or re-pushed after. */
  beginCatchUp(): void {
    this.#queue = [];
    this.#resync = false;
  }

  /** True when events were dropped since the last beginCatchUp. */
  get needsResync(): boolean {
    return this.#resync;
  }

  /** The next thing the tail must act on, or `idle` after `idleMs`. */
  async next(idleMs: number, signal: AbortSignal): Promise<Signal> {
    for (;;) {
      if (signal.aborted) return { kind: "aborted" };
      if (this.#deleted) return { kind: "deleted" };
      if (this.#resync) return { kind: "resync" };
      const event = this.#queue.shift();
      if (event) return { kind: "event", event };
      const woke = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => finish(false), idleMs);
        const onAbort = () => finish(true);
        const finish = (value: boolean) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          this.#wake = undefined;
          resolve(value);
        };
        this.#wake = () => finish(true);
        signal.addEventListener("abort", onAbort, { once: true });
      });
      if (!woke) return { kind: "idle" };
    }
  }

  #notify(): void {
    this.#wake?.();
  }
}
