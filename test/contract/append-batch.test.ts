import { Code, ConnectError } from "@connectrpc/connect";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";

// Concurrent appends to different sessions share one transaction (group
// commit, src/storage/group-commit.ts). Whatever else is in its batch, each
// append must get the answer it would get alone, and a refused one must
// leave nothing behind.

const policy = JSON.stringify({ defaults: { limits: { maxEventsPerSession: 1000, maxEventBytes: 4000, maxStateBytes: 400 } } });

type Answer = { ok: true; revision: bigint; seq: bigint; duplicate: boolean; id: string } | { ok: false; code: Code; message: string };

describeContract(
  "appends committed together",
  (t, backend) => {
    const answer = async (call: Promise<{ revision: bigint; duplicate: boolean; event?: { seq: bigint; id: string } }>) => {
      try {
        const res = await call;
        return {
          ok: true,
          revision: res.revision,
          seq: res.event?.seq ?? -1n,
          duplicate: res.duplicate,
          id: res.event?.id ?? "",
        } as Answer;
      } catch (err) {
        const ce = ConnectError.from(err);
        return { ok: false, code: ce.code, message: ce.rawMessage } as Answer;
      }
    };

    async function sessions(appName: string, n: number) {
      const keys = Array.from({ length: n }, (_, i) => ({ appName, userId: `u${i % 3}`, sessionId: `s${i}` }));
      for (const key of keys) await t().client.createSession(key);
      return keys;
    }

    async function transactions(appName: string): Promise<{ events: number; transactions: number }> {
      const { rows } = await sql<{ events: string; transactions: string }>`
        SELECT count(*)::text AS events, count(DISTINCT tx)::text AS transactions FROM events WHERE app_name = ${appName}`.execute(
        t().database.db,
      );
      return { events: Number(rows[0]?.events), transactions: Number(rows[0]?.transactions) };
    }

    it("gives every append in a shared transaction its own answer", async () => {
      const appName = unique("app");
      const keys = await sessions(appName, 24);
      const k = (i: number) => keys[i] as (typeof keys)[number];
      const stored = await t().client.appendEvent({ ...k(17), event: { id: "dup-17", author: "user", invocationId: "first" } });
      const before = await transactions(appName);
      const text = (s: string) => ({ parts: [{ data: { case: "text" as const, value: s } }] });

      const calls: Promise<Answer>[] = [];
      for (let i = 0; i < 16; i++) {
        calls.push(
          answer(
            t().client.appendEvent({
              ...k(i),
              expectedRevision: 0n,
              event: { author: "agent", actions: { stateDelta: { turn: i, [`user:last${i}`]: i } } },
            }),
          ),
        );
      }
      calls.push(answer(t().client.appendEvent({ ...k(16), expectedRevision: 5n, event: { author: "user" } })));
      calls.push(answer(t().client.appendEvent({ appName, userId: "u0", sessionId: "missing", event: { author: "user" } })));
      calls.push(answer(t().client.appendEvent({ ...k(17), event: { id: "dup-17", author: "user", invocationId: "again" } })));
      calls.push(answer(t().client.appendEvent({ ...k(19), event: { author: "user", content: text("x".repeat(5000)) } })));
      calls.push(answer(t().client.appendEvent({ ...k(20), event: { author: "user" } })));
      calls.push(answer(t().client.appendEvent({ ...k(20), event: { author: "agent" } })));
      calls.push(answer(t().client.appendEvent({ ...k(21), event: { author: "agent", actions: { stateDelta: { "app:k21": 21 } } } })));
      calls.push(answer(t().client.appendEvent({ ...k(22), event: { author: "agent", actions: { stateDelta: { "app:k22": 22 } } } })));
      const answers = await Promise.all(calls);

      for (let i = 0; i < 16; i++) expect(answers[i], `s${i}`).toMatchObject({ ok: true, revision: 1n, seq: 1n, duplicate: false });
      expect(answers[16]).toMatchObject({ ok: false, code: Code.Aborted });
      expect(answers[17]).toMatchObject({ ok: false, code: Code.NotFound });
      expect(answers[18]).toMatchObject({ ok: true, duplicate: true, seq: 1n, id: "dup-17" });
      expect(answers[19]).toMatchObject({ ok: false, code: Code.ResourceExhausted });
      expect([answers[20], answers[21]].map((a) => (a?.ok ? a.seq : -1n)).sort()).toEqual([1n, 2n]);
      expect(answers[22]).toMatchObject({ ok: true, seq: 1n });
      expect(answers[23]).toMatchObject({ ok: true, seq: 1n });

      // The stored state is the fold of exactly the accepted deltas.
      const got = async (i: number) => (await t().client.getSession(k(i))).session;
      expect((await got(3))?.state).toMatchObject({ turn: 3, "user:last0": 0, "user:last3": 3, "app:k21": 21, "app:k22": 22 });
      expect((await got(16))?.revision).toBe(0n);
      expect((await got(17))?.events.map((e) => e.invocationId)).toEqual([stored.event?.invocationId]);
      expect((await got(19))?.revision).toBe(0n);
      expect((await got(20))?.events.map((e) => e.seq)).toEqual([1n, 2n]);

      // And, on PostgreSQL, they were committed together: fewer transactions
      // than events. (The embedded store answers in-process, between network
      // reads, so appends there seldom find others waiting.)
      const after = await transactions(appName);
      const written = after.events - before.events;
      expect(written).toBe(16 + 2 + 2);
      if (backend.name === "postgres") expect(after.transactions - before.transactions).toBeLessThan(written);
    });

    it("refuses only the append whose write passes a state cap, and commits the others together", async () => {
      const appName = unique("app");
      const keys = await sessions(appName, 12);
      const calls = keys.map((key, i) =>
        answer(
          t().client.appendEvent({
            ...key,
            expectedRevision: 0n,
            // Over maxStateBytes only once written: the whole transaction rolls back.
            event: { author: "agent", actions: { stateDelta: i === 6 ? { big: "x".repeat(500) } : { turn: i } } },
          }),
        ),
      );
      const answers = await Promise.all(calls);
      answers.forEach((a, i) => {
        if (i === 6) expect(a).toMatchObject({ ok: false, code: Code.ResourceExhausted });
        else expect(a, `s${i}`).toMatchObject({ ok: true, revision: 1n });
      });
      const refused = (await t().client.getSession(keys[6] as (typeof keys)[number])).session;
      expect(refused?.revision).toBe(0n);
      expect(refused?.state).toEqual({});
      const written = await transactions(appName);
      expect(written.events).toBe(11);
      // The refused append alone was dropped: the others still shared transactions.
      if (backend.name === "postgres") expect(written.transactions).toBeLessThan(11);
    });
  },
  { policy },
);
