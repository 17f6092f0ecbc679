// Group commit: appends that arrive while the database is busy with earlier
// ones wait here and then go to it together, in one statement and one
// transaction. Under load this turns N round trips and N WAL flushes into one;
// with one caller at a time every batch holds one item and nothing waits.

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<T> {
  /** Batches in flight at once: each holds a pooled connection. */
  maxBatches: number;
  maxBatchSize: number;
  /**
   * Items that share a key never go into the same batch: the later one waits
   * for the next. It keeps every batch equivalent to its items run one by one.
   */
  keys: (item: T) => readonly string[];
  /** Told of each batch as it goes to the database: its size and how long each item waited for it (ms). No awaits, must not throw. */
  onBatch?: (size: number, waitsMs: readonly number[]) => void;
}

interface Waiting<T, R> {
  item: T;
  keys: readonly string[];
  since: number;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<T, R> {
  readonly #run: (batch: T[]) => Promise<Outcome<R>[]>;
  readonly #options: GroupCommitOptions<T>;
  #waiting: Waiting<T, R>[] = [];
  #inFlight = 0;

  /** `run` settles every item of its batch, in order; it should not throw. */
  constructor(run: (batch: T[]) => Promise<Outcome<R>[]>, options: GroupCommitOptions<T>) {
    this.#run = run;
    this.#options = options;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, keys: this.#options.keys(item), since: this.#options.onBatch ? performance.now() : 0, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#options.maxBatches && this.#waiting.length > 0) {
      const batch = this.#take();
      const onBatch = this.#options.onBatch;
      if (onBatch) {
        const now = performance.now();
        onBatch(
          batch.length,
          batch.map((w) => now - w.since),
        );
      }
      this.#inFlight++;
      void this.#execute(batch);
    }
  }

  /** The oldest waiting items that fit together; the rest keep their order. */
  #take(): Waiting<T, R>[] {
    const taken: Waiting<T, R>[] = [];
    const left: Waiting<T, R>[] = [];
    const used = new Set<string>();
    const queue = this.#waiting;
    let i = 0;
    for (; i < queue.length && taken.length < this.#options.maxBatchSize; i++) {
      const waiting = queue[i] as Waiting<T, R>;
      if (waiting.keys.some((k) => used.has(k))) {
        left.push(waiting);
        continue;
      }
      for (const k of waiting.keys) used.add(k);
      taken.push(waiting);
    }
    this.#waiting = i < queue.length ? left.concat(queue.slice(i)) : left;
    return taken;
  }

  async #execute(batch: Waiting<T, R>[]): Promise<void> {
    let outcomes: Outcome<R>[];
    try {
      outcomes = await this.#run(batch.map((w) => w.item));
    } catch (error) {
      outcomes = batch.map(() => ({ ok: false, error }));
    }
    // The next batch goes to the database before the callers hear back:
    // answering them is work the database need not wait for.
    this.#inFlight--;
    this.#pump();
    batch.forEach((waiting, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome ? outcome.error : new Error("group commit: no outcome for an item"));
    });
  }
}
