import { context, type Link, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import type { Logger } from "../log/logger.js";
import type { EventLog, LoggedEvent } from "../storage/event-log.js";
import { compare, type LogPosition } from "../storage/log-position.js";
import { getTracer, tracingEnabled } from "../tracing/tracing.js";

/** Links a fan-out span keeps to the batches that woke it; a burst beyond this is counted, not linked. */
const MAX_LINKS = 32;

/** What a tail asks the feed for. */
export interface FeedFilter {
  appName: string;
  userId?: string | undefined;
  sessionPk?: bigint | undefined;
}

/** The feed's side of one tail. Calls arrive in log order. */
export interface FeedSubscriber {
  readonly filter: FeedFilter;
  /** A committed event of the subscriber's scope. */
  push(event: LoggedEvent): void;
  /** Everything up to `position` has been pushed. */
  progress(position: LogPosition): void;
  /** Notifications may have been lost: re-read from the table. */
  reset(): void;
  /** The subscribed session was deleted. */
  deleted(): void;
}

export interface FeedOptions {
  /** Rows per read. */
  batch: number;
  /** Safety net: read at least this often while anyone listens (a replica may die between commit and NOTIFY). */
  pollMs: number;
}

/**
 * One reader per process for every live tail. Woken by local appends and by
 * NOTIFY from other replicas, it reads new rows from the table once, in log
 * order, and hands each to the tails whose scope it matches. Tails never
 * query per notification, so a thousand of them cost one read per wake.
 */
export class EventFeed {
  readonly #log: EventLog;
  readonly #logger: Logger;
  readonly #options: FeedOptions;
  readonly #bySession = new Map<bigint, Set<FeedSubscriber>>();
  readonly #byUser = new Map<string, Set<FeedSubscriber>>();
  readonly #byApp = new Map<string, Set<FeedSubscriber>>();
  #count = 0;
  #position: LogPosition | undefined;
  #starting: Promise<void> | undefined;
  #running = false;
  #dirty = false;
  #retryMs = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** While tracing is on: the spans (batches) whose commits woke the feed since its last traced read, and how many. */
  #links: Link[] = [];
  #wakers = 0;

  constructor(log: EventLog, logger: Logger, options: FeedOptions) {
    this.#log = log;
    this.#logger = logger;
    this.#options = options;
  }

  /** Tails that fell behind and went back to the table (a counter for operators and tests). */
  overflows = 0;

  recordOverflow(): void {
    this.overflows++;
  }

  get subscriberCount(): number {
    return this.#count;
  }

  /** Open tails by what they follow (for metrics; counted at a scrape, not per event). */
  subscribersByScope(): { session: number; user: number; app: number } {
    const sum = (map: Map<unknown, Set<FeedSubscriber>>) => {
      let n = 0;
      for (const set of map.values()) n += set.size;
      return n;
    };
    return { session: sum(this.#bySession), user: sum(this.#byUser), app: sum(this.#byApp) };
  }

  /** Timers the feed holds; zero when nobody listens. */
  get timerCount(): number {
    return (this.#retryTimer ? 1 : 0) + (this.#pollTimer ? 1 : 0);
  }

  /**
   * Registers a tail. From the moment this resolves, every event committed
   * later than the feed's position reaches the subscriber; the tail reads
   * what came before from the table.
   */
  async subscribe(subscriber: FeedSubscriber): Promise<() => void> {
    if (this.#count === 0 && !this.#position) {
      // Nobody was listening: start from now instead of replaying a backlog
      // no one needs. The new tail's own catch-up covers what lies before.
      this.#starting ??= this.#log.now().then(
        (position) => {
          this.#position ??= position;
          this.#starting = undefined;
        },
        (err: unknown) => {
          this.#starting = undefined;
          throw err;
        },
      );
      await this.#starting;
    }
    this.#add(subscriber);
    this.#ensurePolling();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.#remove(subscriber);
    };
  }

  /** New rows may have been committed. Reads are coalesced. */
  wake(): void {
    if (this.#closed || this.#count === 0) return;
    this.#dirty = true;
    if (tracingEnabled()) {
      const waker = trace.getSpanContext(context.active());
      if (waker) {
        this.#wakers++;
        if (this.#links.length < MAX_LINKS) this.#links.push({ context: waker });
      }
      // The loop serves whoever wakes it next, not this caller: it runs in no call's trace.
      if (!this.#running) void context.with(ROOT_CONTEXT, () => this.#run());
      return;
    }
    if (!this.#running) void this.#run();
  }

  sessionDeleted(sessionPk: bigint): void {
    for (const subscriber of this.#bySession.get(sessionPk) ?? []) subscriber.deleted();
  }

  /** Tells every tail to re-read from its own position (e.g. after the LISTEN connection dropped). */
  resetAll(): void {
    for (const set of [...this.#bySession.values(), ...this.#byUser.values(), ...this.#byApp.values()]) {
      for (const subscriber of set) subscriber.reset();
    }
    this.wake();
  }

  close(): void {
    this.#closed = true;
    this.#stopTimers();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      while (this.#dirty && !this.#closed && this.#count > 0) {
        this.#dirty = false;
        const from = this.#position;
        if (!from) break;
        const started = tracingEnabled() ? performance.timeOrigin + performance.now() : 0;
        let read: Awaited<ReturnType<EventLog["readScope"]>>;
        try {
          read = await this.#log.readScope({}, from, this.#options.batch);
        } catch (err) {
          this.#logger.warn("live feed read failed; tails re-read from the table", { err });
          this.resetAll();
          this.#scheduleRetry();
          break;
        }
        // A subscriber that arrived during the read may have started past
        // rows this read returns; tails drop what they already hold.
        let deliveries = 0;
        for (const event of read.events) deliveries += this.#dispatch(event);
        if (started > 0 && read.events.length > 0) this.#traceFanOut(started, read.events.length, deliveries);
        if (this.#count > 0 && compare(read.reached, from) > 0) this.#position = read.reached;
        this.#broadcastProgress(read.reached);
        if (read.events.length >= this.#options.batch) this.#dirty = true;
        else if (read.pending) this.#scheduleRetry();
        else this.#retryMs = 0;
      }
    } finally {
      this.#running = false;
    }
  }

  /**
   * While tracing is on, a read that found rows committed by this process's
   * traced calls is a span of its own (the fan-out to tails), linked to the
   * batches that woke the feed since the last such read; its start is the
   * read's. Reads of rows from other replicas only are not traced.
   */
  #traceFanOut(started: number, events: number, deliveries: number): void {
    if (this.#links.length === 0) return;
    const links = this.#links;
    const wakers = this.#wakers;
    this.#links = [];
    this.#wakers = 0;
    getTracer()
      .startSpan("sessionstore.feed.fan_out", {
        root: true,
        startTime: started,
        links,
        attributes: {
          "sessionstore.feed.commits": wakers,
          "sessionstore.feed.events": events,
          "sessionstore.feed.deliveries": deliveries,
          "sessionstore.feed.tails": this.#count,
        },
      })
      .end();
  }

  // Rows committed above the watermark wait for an older transaction to end,
  // which sends no notification: look again soon, backing off.
  #scheduleRetry(): void {
    if (this.#retryTimer || this.#closed) return;
    this.#retryMs = Math.min(Math.max(this.#retryMs * 2, 5), 250);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.wake();
    }, this.#retryMs);
    this.#retryTimer.unref();
  }

  #ensurePolling(): void {
    if (this.#pollTimer || this.#closed) return;
    // Created in no call's context: a poll wakes the feed on nobody's behalf.
    this.#pollTimer = context.with(ROOT_CONTEXT, () => setInterval(() => this.wake(), this.#options.pollMs));
    this.#pollTimer.unref();
  }

  #stopTimers(): void {
    if (this.#pollTimer) clearInterval(this.#pollTimer);
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#pollTimer = undefined;
    this.#retryTimer = undefined;
  }

  /** Hands the event to the tails of its scope; returns how many. */
  #dispatch(event: LoggedEvent): number {
    let n = 0;
    for (const tails of [
      this.#bySession.get(event.sessionPk),
      this.#byUser.get(userKey(event.appName, event.userId)),
      this.#byApp.get(event.appName),
    ]) {
      if (!tails) continue;
      for (const subscriber of tails) subscriber.push(event);
      n += tails.size;
    }
    return n;
  }

  // Once per read, over every tail: with 10,000 tails a copy of them all into
  // one array per read was garbage for nothing.
  #broadcastProgress(position: LogPosition): void {
    for (const map of [this.#bySession, this.#byUser, this.#byApp] as Map<unknown, Set<FeedSubscriber>>[]) {
      for (const set of map.values()) for (const subscriber of set) subscriber.progress(position);
    }
  }

  #index(filter: FeedFilter): [Map<unknown, Set<FeedSubscriber>>, unknown] {
    if (filter.sessionPk !== undefined) return [this.#bySession as Map<unknown, Set<FeedSubscriber>>, filter.sessionPk];
    if (filter.userId !== undefined) return [this.#byUser as Map<unknown, Set<FeedSubscriber>>, userKey(filter.appName, filter.userId)];
    return [this.#byApp as Map<unknown, Set<FeedSubscriber>>, filter.appName];
  }

  #add(subscriber: FeedSubscriber): void {
    const [map, key] = this.#index(subscriber.filter);
    const set = map.get(key) ?? new Set<FeedSubscriber>();
    map.set(key, set);
    set.add(subscriber);
    this.#count++;
  }

  #remove(subscriber: FeedSubscriber): void {
    const [map, key] = this.#index(subscriber.filter);
    const set = map.get(key);
    if (!set?.delete(subscriber)) return;
    if (set.size === 0) map.delete(key);
    this.#count--;
    if (this.#count === 0) {
      // Idle: forget the position so a later first tail starts from "now".
      this.#position = undefined;
      this.#stopTimers();
      this.#links = [];
      this.#wakers = 0;
    }
  }
}

function userKey(appName: string, userId: string): string {
  return `${appName}\u0000${userId}`;
}
