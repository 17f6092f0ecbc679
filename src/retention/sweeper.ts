import type { Logger } from "../log/logger.js";
import { expiryCutoff, type PolicySet } from "../policy/app-policy.js";
import type { MemoryStore } from "../storage/memory-store.js";
import type { SessionStore } from "../storage/session-store.js";
import type { SweepScope } from "../storage/sweep-scope.js";

const BATCH = 500;

/** Another store whose rows expire by the same per-app time-to-live (LangGraph threads). */
export interface Expiring {
  sweepExpired(scope: SweepScope, cutoff: bigint, batch: number): Promise<number>;
}

/**
 * Deletes expired sessions in the background. Reads already treat them as
 * gone; sweeping reclaims their rows and ends their tails. Every replica may
 * run it: batches skip rows another replica has locked.
 */
export class Sweeper {
  readonly #store: SessionStore;
  readonly #policies: PolicySet;
  readonly #logger: Logger;
  readonly #memories: MemoryStore | undefined;
  readonly #others: readonly Expiring[];
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  /** Expired sessions this sweeper has deleted since it was made (for metrics). */
  sessionsSwept = 0;

  constructor(store: SessionStore, policies: PolicySet, logger: Logger, memories?: MemoryStore, others: readonly Expiring[] = []) {
    this.#store = store;
    this.#memories = memories;
    this.#others = others;
    this.#policies = policies;
    this.#logger = logger;
  }

  /**
   * True when some app has a time-to-live at all, or memories are kept:
   * a memory entry may carry its own expiry.
   */
  get needed(): boolean {
    if (this.#memories) return true;
    return this.#policies.defaults.ttlSeconds !== undefined || this.#policies.overridden.some(([, p]) => p.ttlSeconds !== undefined);
  }

  start(intervalMs: number): void {
    if (!this.needed || this.#timer) return;
    this.#timer = setInterval(() => {
      void this.sweepOnce().catch((err: unknown) => this.#logger.warn("retention sweep failed; retrying next interval", { err }));
    }, intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => {});
  }

  /** One full pass; resolves with the number of sessions deleted. */
  sweepOnce(): Promise<number> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(): Promise<number> {
    let total = 0;
    const overridden = this.#policies.overridden;
    for (const [appName, policy] of overridden) {
      if (policy.ttlSeconds === undefined) continue;
      total += await this.#drain({ appName }, policy.ttlSeconds);
    }
    const defaultTtl = this.#policies.defaults.ttlSeconds;
    if (defaultTtl !== undefined) total += await this.#drain({ except: overridden.map(([name]) => name) }, defaultTtl);
    if (total > 0) this.#logger.info("expired sessions deleted", { sessions: total });
    if (this.#memories) await this.#sweepMemories(this.#memories);
    return total;
  }

  /** Memories past their own expiry, then past their app's memory retention. */
  async #sweepMemories(memories: MemoryStore): Promise<void> {
    const drain = async (scope: SweepScope | undefined, ttlSeconds?: number) => {
      const cutoff = ttlSeconds === undefined ? undefined : BigInt(Date.now()) * 1_000_000n - BigInt(ttlSeconds) * 1_000_000_000n;
      let total = 0;
      for (;;) {
        const deleted = await memories.sweepExpired(scope, cutoff, BATCH);
        total += deleted;
        if (deleted < BATCH) return total;
      }
    };
    let total = await drain(undefined);
    const overridden = this.#policies.overridden;
    for (const [appName, policy] of overridden) {
      if (policy.memory.ttlSeconds !== undefined) total += await drain({ appName }, policy.memory.ttlSeconds);
    }
    const defaultTtl = this.#policies.defaults.memory.ttlSeconds;
    if (defaultTtl !== undefined) total += await drain({ except: overridden.map(([name]) => name) }, defaultTtl);
    if (total > 0) this.#logger.info("expired memories deleted", { memories: total });
  }

  async #drain(scope: SweepScope, ttlSeconds: number): Promise<number> {
    const cutoff = expiryCutoff(ttlSeconds) as bigint;
    let total = 0;
    for (;;) {
      const deleted = await this.#store.sweepExpired(scope, cutoff, BATCH);
      total += deleted;
      this.sessionsSwept += deleted;
      if (deleted < BATCH) break;
    }
    for (const other of this.#others) {
      for (;;) {
        if ((await other.sweepExpired(scope, cutoff, BATCH)) < BATCH) break;
      }
    }
    return total;
  }
}
