import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { SessionService, StreamEventsRequestSchema, StreamEventsResponse } from "../../gen/ts/sessionstore/v1/session_service_pb.js";

type Init = MessageInitShape<typeof StreamEventsRequestSchema>;

/**
 * A tail consumed in the background: every response is recorded, and tests
 * wait for conditions on what arrived instead of sleeping.
 */
export class TailRecorder {
  readonly responses: StreamEventsResponse[] = [];
  readonly #controller = new AbortController();
  readonly done: Promise<unknown>;
  #waiters: (() => void)[] = [];

  constructor(client: Client<typeof SessionService>, request: Init) {
    this.done = (async () => {
      try {
        for await (const res of client.streamEvents(request, { signal: this.#controller.signal })) {
          this.responses.push(res);
          this.#poke();
        }
        return undefined;
      } catch (err) {
        return err;
      } finally {
        this.#poke();
      }
    })();
  }

  get events() {
    return this.responses.flatMap((r) => (r.kind.case === "event" ? [r.kind.value] : []));
  }

  get caughtUp(): boolean {
    return this.responses.some((r) => r.kind.case === "caughtUp");
  }

  /** The cursor of the last response that carried one. */
  get lastCursor(): string | undefined {
    for (let i = this.responses.length - 1; i >= 0; i--) {
      const kind = this.responses[i]?.kind;
      if (kind?.case === "event" || kind?.case === "caughtUp" || kind?.case === "heartbeat") return kind.value.cursor;
    }
    return undefined;
  }

  /** Resolves when `predicate` holds; rejects after `ms` with what arrived so far. */
  async until(predicate: (t: TailRecorder) => boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`tail condition not met in ${ms} ms; got ${this.responses.length} responses`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  cancel(): void {
    this.#controller.abort();
  }

  #poke(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
