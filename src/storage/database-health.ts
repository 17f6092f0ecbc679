import { isConnectionLoss, sqlState } from "./pg-errors.js";

/** How long one probe may take before it counts as failed. */
const PROBE_TIMEOUT_MS = 2000;
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2000;

/**
 * Whether the database can be reached, as cheaply as it can be known: no
 * query runs while things go well. The drivers report what they see (a
 * pooled connection broke, no connection could be had, a query failed
 * because the connection went away, the LISTEN connection dropped); each
 * report starts a probe, and only a failed probe marks the database
 * unreachable. While it is, the probe runs again with a jittered, growing
 * pause, and the first one that succeeds marks it reachable again. So a
 * health check reads a boolean, and a single terminated backend on a
 * healthy database costs one probe, not a NOT_SERVING.
 */
export class DatabaseHealth {
  readonly #probe: () => Promise<void>;
  readonly #listeners = new Set<(reachable: boolean) => void>();
  #reachable = true;
  #probing = false;
  #retryMs = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Probes run so far (tests and operators see the monitor stays quiet while healthy). */
  probes = 0;

  constructor(probe: () => Promise<void>) {
    this.#probe = probe;
  }

  get reachable(): boolean {
    return this.#reachable;
  }

  /** Calls `listener` on every change; returns its removal. */
  onChange(listener: (reachable: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Errors seen by the drivers and failed queries, by class: the SQLSTATE's
   * class (its first two characters, e.g. "23", "40"), "connection" for a
   * lost or refused connection without one, or "other" (for metrics).
   */
  readonly errorsByClass = new Map<string, number>();

  /** An error seen by a driver or a query; only those meaning the database went away start a probe. */
  observe(err: unknown): void {
    const lost = isConnectionLoss(err);
    const state = sqlState(err);
    const kind = state !== undefined ? state.slice(0, 2) : lost ? "connection" : "other";
    this.errorsByClass.set(kind, (this.errorsByClass.get(kind) ?? 0) + 1);
    if (lost) this.suspect();
  }

  /** Something suggests the database went away: find out. */
  suspect(): void {
    if (this.#closed || this.#probing || this.#timer) return;
    void this.#check();
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #check(): Promise<void> {
    this.#probing = true;
    let ok: boolean;
    try {
      this.probes++;
      await withTimeout(this.#probe(), PROBE_TIMEOUT_MS);
      ok = true;
    } catch {
      ok = false;
    } finally {
      this.#probing = false;
    }
    if (this.#closed) return;
    this.#set(ok);
    if (ok) {
      this.#retryMs = 0;
      return;
    }
    this.#retryMs = Math.min(Math.max(this.#retryMs * 2, FIRST_RETRY_MS), MAX_RETRY_MS);
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        void this.#check();
      },
      this.#retryMs / 2 + Math.random() * (this.#retryMs / 2),
    );
    this.#timer.unref();
  }

  #set(reachable: boolean): void {
    if (reachable === this.#reachable) return;
    this.#reachable = reachable;
    for (const listener of this.#listeners) listener(reachable);
  }
}

/** A timer later than this fired after the event loop was busy. */
const STALL_MS = 100;
/** Waits restarted after stalls, at most: a loop that is always late still reports. */
const MAX_RESTARTS = 3;

/**
 * Rejects when `promise` has not settled within `ms`. A timer that fires late
 * means the event loop was busy (a burst of thousands of calls, a long
 * garbage collection) and the answer may be sitting unread in the socket:
 * timers run before I/O. Such a stall is the server's, not the database's,
 * so the wait starts again from the moment the loop is free (a few times at
 * most), instead of reporting the database unreachable.
 */
export function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let restarts = 0;
  const expired = new Promise<never>((_, reject) => {
    const arm = () => {
      const due = performance.now() + ms;
      timer = setTimeout(() => {
        if (performance.now() - due > STALL_MS && restarts++ < MAX_RESTARTS) arm();
        else reject(new Error(`no answer within ${ms} ms`));
      }, ms);
    };
    arm();
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
