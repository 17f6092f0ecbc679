// Group commit: appends that arrive while the database is busy with earlier
// ones wait here and then go to it together, in one statement and one
// transaction. Under load this turns N round trips and N WAL flushes into one;
// with one caller at a time every batch holds one item and nothing waits.
import { type Context, context, type Link, SpanStatusCode, trace } from "@opentelemetry/api";
import { getTracer, tracingEnabled } from "../tracing/tracing.js";

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
  /** The batch span's name, while tracing is on. */
  name?: string;
}

interface Waiting<T, R> {
  item: T;
  keys: readonly string[];
  since: number;
  /** The submitter's trace context, while tracing is on. */
  traced: Context | undefined;
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
      this.#waiting.push({
        item,
        keys: this.#options.keys(item),
        since: this.#options.onBatch ? performance.now() : 0,
        traced: tracingEnabled() ? context.active() : undefined,
        resolve,
        reject,
      });
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
      outcomes = await (batch[0]?.traced ? this.#tracedRun(batch) : this.#run(batch.map((w) => w.item)));
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

  /**
   * The batch as one span: a child of its first item's call, linked to every
   * item's call, and each of those calls told (an event on its span) which
   * batch it joined. The batch's SQL is the span's child.
   */
  #tracedRun(batch: Waiting<T, R>[]): Promise<Outcome<R>[]> {
    const links: Link[] = [];
    for (const waiting of batch) {
      const spanContext = waiting.traced && trace.getSpanContext(waiting.traced);
      if (spanContext) links.push({ context: spanContext });
    }
    const parent = batch[0]?.traced as Context;
    const span = getTracer().startSpan(
      this.#options.name ?? "group commit",
      { links, attributes: { "sessionstore.batch.size": batch.length } },
      parent,
    );
    const { traceId, spanId } = span.spanContext();
    for (const waiting of batch) {
      if (waiting.traced) {
        trace.getSpan(waiting.traced)?.addEvent("joined batch", {
          "sessionstore.batch.trace_id": traceId,
          "sessionstore.batch.span_id": spanId,
          "sessionstore.batch.size": batch.length,
        });
      }
    }
    return context.with(trace.setSpan(parent, span), () =>
      this.#run(batch.map((w) => w.item)).then(
        (outcomes) => {
          const failed = outcomes.filter((o) => !o.ok).length;
          if (failed > 0) span.setAttribute("sessionstore.batch.refused", failed);
          span.end();
          return outcomes;
        },
        (err: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
          span.end();
          throw err;
        },
      ),
    );
  }
}
