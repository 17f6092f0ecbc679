import type { Client } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionService, StreamedEvent } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { pgliteBackend } from "../support/backends.js";
import { unique } from "../support/ids.js";
import { postgresAvailable, type ReplicaSet, startReplicas } from "../support/replicas.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TailRecorder } from "../support/tail.js";

type SessionClient = Client<typeof SessionService>;

interface Scope {
  userId?: string;
  sessionId?: string;
}

/** A tail that restarts from its last cursor each time it has seen `restarts[i]` more events. */
class RestartingTail {
  readonly events: StreamedEvent[] = [];
  #current: TailRecorder | undefined;
  #stopped = false;
  readonly #loop: Promise<void>;

  constructor(
    clients: SessionClient[],
    readonly appName: string,
    readonly scope: Scope,
    restarts: number[],
    pick: () => number,
  ) {
    const open = (cursor?: string) =>
      new TailRecorder(clients[pick() % clients.length] as SessionClient, {
        appName,
        ...scope,
        ...(cursor ? { start: { case: "cursor" as const, value: cursor } } : {}),
      });
    this.#current = open();
    this.#loop = (async () => {
      for (const after of restarts) {
        const tail = this.#current as TailRecorder;
        try {
          await tail.until((r) => r.events.length >= after || this.#stopped, 30_000);
        } catch {
          return;
        }
        if (this.#stopped) return;
        tail.cancel();
        await tail.done;
        this.events.push(...tail.events);
        this.#current = open(tail.lastCursor);
      }
    })();
  }

  get all(): StreamedEvent[] {
    return [...this.events, ...(this.#current?.events ?? [])];
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
    this.#current?.cancel();
    await this.#current?.done;
  }

  matches(e: { userId: string; sessionId: string }): boolean {
    return (
      (this.scope.userId === undefined || this.scope.userId === e.userId) &&
      (this.scope.sessionId === undefined || this.scope.sessionId === e.sessionId)
    );
  }
}

const plan = fc.record({
  sessions: fc.array(fc.constantFrom("u1", "u2"), { minLength: 2, maxLength: 5 }),
  writers: fc.array(fc.array(fc.nat(), { minLength: 3, maxLength: 12 }), { minLength: 3, maxLength: 8 }),
  restarts: fc.array(fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 4 }), { minLength: 7, maxLength: 7 }),
  seed: fc.nat(),
});

type Plan = typeof plan extends fc.Arbitrary<infer T> ? T : never;

async function runPlan(clients: SessionClient[], p: Plan) {
  const appName = unique("prop");
  let rng = p.seed;
  const pick = () => {
    rng = (rng * 1103515245 + 12345) % 2 ** 31;
    return rng;
  };
  const sessions = p.sessions.map((userId, i) => ({ userId, sessionId: `s${i}` }));
  for (const s of sessions) await (clients[0] as SessionClient).createSession({ appName, ...s });

  const scopes: Scope[] = [{}, { userId: "u1" }, { userId: "u2" }, ...sessions.slice(0, 4).map((s) => ({ ...s }))];
  const tails = scopes.map((scope, i) => new RestartingTail(clients, appName, scope, p.restarts[i] ?? [], pick));

  // Writers race on shared sessions through every replica.
  await Promise.all(
    p.writers.map(async (appends, w) => {
      for (const n of appends) {
        const s = sessions[n % sessions.length] as (typeof sessions)[number];
        await (clients[(w + n) % clients.length] as SessionClient).appendEvent({
          appName,
          ...s,
          event: { author: `w${w}`, actions: { stateDelta: { [`w${w}`]: n } } },
        });
      }
    }),
  );

  const committed: { userId: string; sessionId: string; seq: number }[] = [];
  for (const s of sessions) {
    const events = (await (clients[0] as SessionClient).listEvents({ appName, ...s, pageSize: 1000 })).events;
    for (const e of events) committed.push({ ...s, seq: Number(e.seq) });
  }

  for (const tail of tails) {
    const expected = committed.filter((e) => tail.matches(e));
    const deadline = Date.now() + 20_000;
    while (tail.all.length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await tail.stop();
    const got = tail.all.map((e) => ({ userId: e.userId, sessionId: e.sessionId, seq: Number(e.event?.seq) }));
    const keyOf = (e: { userId: string; sessionId: string; seq: number }) => `${e.userId}/${e.sessionId}/${e.seq}`;
    // Exactly the committed events of the scope, each once...
    expect(got.map(keyOf).sort(), `scope ${JSON.stringify(tail.scope)}`).toEqual(expected.map(keyOf).sort());
    // ...and each session's in seq order.
    const last = new Map<string, number>();
    for (const e of got) {
      const prev = last.get(`${e.userId}/${e.sessionId}`) ?? 0;
      expect(e.seq, `order in ${e.sessionId} for scope ${JSON.stringify(tail.scope)}`).toBe(prev + 1);
      last.set(`${e.userId}/${e.sessionId}`, e.seq);
    }
  }
}

describe.skipIf(!postgresAvailable())("tails under concurrent writers, two replicas [postgres]", () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    set = await startReplicas(2);
  });
  afterAll(async () => {
    await set?.close();
  });

  it("see exactly the committed events, each once, in per-session seq order", async () => {
    const clients = set.replicas.map((r) => r.client);
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(plan, async (p) => {
        runs++;
        await runPlan(clients, p);
      }),
      { numRuns: 6, endOnFailure: true },
    );
    expect(runs).toBe(6);
  });
});

describe("tails under concurrent writers, embedded store [pglite]", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(pgliteBackend);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("see exactly the committed events, each once, in per-session seq order", async () => {
    await fc.assert(
      fc.asyncProperty(plan, (p) => runPlan([server.client], p)),
      { numRuns: 4, endOnFailure: true },
    );
  });
});
