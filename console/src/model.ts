import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Event, FunctionCall, FunctionResponse } from "../../gen/ts/sessionstore/v1/event_pb.js";

/** A key of an event's state delta with the value it replaced. */
export interface DeltaChange {
  key: string;
  /** Undefined when the key was not set before (or the state before is unknown). */
  before: JsonValue | undefined;
  had: boolean;
  after: JsonValue;
}

export interface Call {
  seq: bigint;
  call: FunctionCall;
}

export interface Reply {
  seq: bigint;
  response: FunctionResponse;
}

/**
 * The events of one session as the console has loaded them, in seq order,
 * with what the timeline needs: each delta's replaced values (a running fold
 * from the create-time state, the same fold the server's as_of_seq computes)
 * and tool calls paired with their responses.
 */
export class SessionModel {
  readonly events: Event[] = [];
  readonly changes: DeltaChange[][] = [];
  /** The state after the last loaded event, as this session wrote it. */
  readonly state: JsonObject;
  /** False when the create-time state is unknown (sessions from before migration 0005). */
  readonly initialKnown: boolean;
  readonly #calls = new Map<string, Call>();
  readonly #replies = new Map<string, Reply>();
  /** Calls without an id, by name, waiting for a response without an id. */
  readonly #openByName = new Map<string, Call[]>();
  readonly #pairs = new Map<FunctionCall | FunctionResponse, Call | Reply>();
  readonly authors = new Set<string>();

  constructor(initial: JsonObject | undefined) {
    this.initialKnown = initial !== undefined;
    this.state = {};
    for (const [key, value] of Object.entries(initial ?? {})) {
      Object.defineProperty(this.state, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }

  get lastSeq(): bigint {
    return this.events[this.events.length - 1]?.seq ?? 0n;
  }

  /** Adds the next event; false (and nothing changes) for one already loaded. */
  add(event: Event): boolean {
    if (event.seq <= this.lastSeq) return false;
    this.events.push(event);
    this.authors.add(event.author);
    const delta = event.actions?.stateDelta ?? {};
    const changes: DeltaChange[] = [];
    for (const [key, after] of Object.entries(delta)) {
      const had = Object.hasOwn(this.state, key);
      changes.push({ key, had, before: had ? this.state[key] : undefined, after: after as JsonValue });
      Object.defineProperty(this.state, key, { value: after, enumerable: true, writable: true, configurable: true });
    }
    changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.changes.push(changes);
    for (const part of event.content?.parts ?? []) {
      if (part.data.case === "functionCall") this.#addCall({ seq: event.seq, call: part.data.value });
      if (part.data.case === "functionResponse") this.#addReply({ seq: event.seq, response: part.data.value });
    }
    return true;
  }

  indexOf(seq: bigint): number {
    const first = this.events[0]?.seq ?? 1n;
    const i = Number(seq - first);
    return this.events[i]?.seq === seq ? i : this.events.findIndex((e) => e.seq === seq);
  }

  /** The response paired with a call, or the call paired with a response. */
  pairOf(part: FunctionCall | FunctionResponse): Call | Reply | undefined {
    return this.#pairs.get(part);
  }

  #addCall(call: Call): void {
    const id = call.call.id;
    if (id) {
      this.#calls.set(id, call);
      const reply = this.#replies.get(id);
      if (reply) this.#pair(call, reply);
    } else {
      const open = this.#openByName.get(call.call.name) ?? [];
      open.push(call);
      this.#openByName.set(call.call.name, open);
    }
  }

  #addReply(reply: Reply): void {
    const id = reply.response.id;
    if (id) {
      this.#replies.set(id, reply);
      const call = this.#calls.get(id);
      if (call) this.#pair(call, reply);
    } else {
      // Without ids (some runtimes), the oldest open call of the same name.
      const call = this.#openByName.get(reply.response.name)?.shift();
      if (call) this.#pair(call, reply);
    }
  }

  #pair(call: Call, reply: Reply): void {
    this.#pairs.set(call.call, reply);
    this.#pairs.set(reply.response, call);
  }
}
