import { isConnectionLoss } from "./pg-errors.js";

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

  /** An error seen by a driver or a query; only those meaning the database went away count. */
  observe(err: unknown): void {
    if (isConnectionLoss(err)) this.suspect();
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

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
