import { NotFound } from "../domain/outcomes.js";
import type { EventLog, LoggedEvent } from "../storage/event-log.js";
import { compare, type LogPosition, later } from "../storage/log-position.js";
import type { EventFeed } from "./feed.js";
import { Subscription } from "./subscription.js";

export interface TailOptions {
  heartbeatMs: number;
  signal: AbortSignal;
  /** Events a tail may hold in memory before it falls back to the table. */
  capacity: number;
  /** Rows per table read. */
  batch: number;
}

export interface TailDeps {
  feed: EventFeed;
  log: EventLog;
  /** False when the session was deleted or has expired. */
  sessionExists(sessionPk: bigint, appName: string): Promise<boolean>;
  /** The app's retention cutoff, if it has one. */
  liveSince(appName: string): bigint | undefined;
}

export type TailItem<P> =
  | { kind: "event"; event: LoggedEvent; position: P }
  | { kind: "caughtUp"; position: P }
  | { kind: "heartbeat"; position: P };

export interface SessionScope {
  appName: string;
  userId: string;
  sessionId: string;
  sessionPk: bigint;
}

export interface WideScope {
  appName: string;
  userId?: string | undefined;
}

const deletedError = (scope: SessionScope) => new NotFound(`session "${scope.sessionId}" was deleted`);

/**
 * One session, by seq. The session row lock makes seq order commit order,
 * so every row with seq <= the highest visible one is final: a plain
 * `seq > after` read never skips.
 */
export async function* tailSession(
  scope: SessionScope,
  start: bigint | "now",
  deps: TailDeps,
  options: TailOptions,
): AsyncGenerator<TailItem<bigint>> {
  const sub = new Subscription({ appName: scope.appName, userId: scope.userId, sessionPk: scope.sessionPk }, options.capacity, () =>
    deps.feed.recordOverflow(),
  );
  const unsubscribe = await deps.feed.subscribe(sub);
  try {
    // Checked after subscribing, so a delete from here on is seen as a signal.
    if (!(await deps.sessionExists(scope.sessionPk, scope.appName))) throw deletedError(scope);
    let seq = start === "now" ? await deps.log.lastSeq(scope.sessionPk) : start;

    const catchUp = async function* (): AsyncGenerator<TailItem<bigint>> {
      yield* untilSettled(sub, options.signal, async function* () {
        for (;;) {
          const events = await deps.log.readSession(scope.sessionPk, seq, options.batch);
          for (const event of events) {
            seq = event.seq;
            yield { kind: "event", event, position: seq };
          }
          if (events.length < options.batch) return;
        }
      });
      if (sub.isDeleted || !(await deps.sessionExists(scope.sessionPk, scope.appName))) throw deletedError(scope);
    };

    yield* catchUp();
    yield { kind: "caughtUp", position: seq };
    for (;;) {
      const signal = await sub.next(options.heartbeatMs, options.signal);
      switch (signal.kind) {
        case "aborted":
          return;
        case "deleted":
          throw deletedError(scope);
        case "idle":
          yield { kind: "heartbeat", position: seq };
          break;
        case "resync":
          yield* catchUp();
          break;
        case "event":
          if (signal.event.seq <= seq) break;
          if (signal.event.seq === seq + 1n) {
            seq = signal.event.seq;
            yield { kind: "event", event: signal.event, position: seq };
          } else {
            // A gap means something was not pushed: the table has it.
            yield* catchUp();
          }
          break;
      }
    }
  } finally {
    unsubscribe();
  }
}

/** All sessions of a user or an app, in (tx, pos) order below the watermark. */
export async function* tailScope(
  scope: WideScope,
  start: LogPosition | "now",
  deps: TailDeps,
  options: TailOptions,
): AsyncGenerator<TailItem<LogPosition>> {
  const sub = new Subscription({ appName: scope.appName, userId: scope.userId }, options.capacity, () => deps.feed.recordOverflow());
  const unsubscribe = await deps.feed.subscribe(sub);
  try {
    // Taken after subscribing: what commits later is read by the catch-up below or pushed by the feed.
    let position = start === "now" ? await deps.log.head(scope) : start;

    const catchUp = () =>
      untilSettled(sub, options.signal, async function* (): AsyncGenerator<TailItem<LogPosition>> {
        for (;;) {
          const read = await deps.log.readScope({ ...scope, liveSince: deps.liveSince(scope.appName) }, position, options.batch);
          for (const event of read.events) {
            position = event.position;
            yield { kind: "event", event, position };
          }
          // The read's watermark is at or past the feed's position when this
          // tail subscribed, so from here the feed has everything after it.
          position = later(position, read.reached);
          if (read.events.length < options.batch) return;
        }
      });

    yield* catchUp();
    yield { kind: "caughtUp", position };
    for (;;) {
      const signal = await sub.next(options.heartbeatMs, options.signal);
      switch (signal.kind) {
        case "aborted":
          return;
        case "deleted":
          break;
        case "idle": {
          const settled = sub.settledPosition;
          if (settled) position = later(position, settled);
          yield { kind: "heartbeat", position };
          break;
        }
        case "resync":
          yield* catchUp();
          break;
        case "event":
          if (compare(signal.event.position, position) <= 0) break;
          position = signal.event.position;
          yield { kind: "event", event: signal.event, position };
          break;
      }
    }
  } finally {
    unsubscribe();
  }
}

/**
 * Runs one pass of reads from the table, and again while the mailbox dropped
 * events during it: a pass that ends with nothing dropped leaves the feed
 * holding everything after it.
 */
async function* untilSettled<T>(sub: Subscription, signal: AbortSignal, pass: () => AsyncGenerator<T>): AsyncGenerator<T> {
  do {
    sub.beginCatchUp();
    yield* pass();
  } while (sub.needsResync && !signal.aborted);
}
