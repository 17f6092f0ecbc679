import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { splitState } from "../../src/domain/state.js";
import { nsToTimestamp } from "../../src/domain/time.js";
import { loadPolicy } from "../../src/policy/app-policy.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { SessionStore } from "../../src/storage/session-store.js";
import { backends } from "../support/backends.js";

// sessionstore_append (migration 0004) completes each stored event with its
// seq and, for server times, its timestamp, as protobuf bytes built in SQL.
// Readers decode those bytes: they must mean exactly what protobuf-es would
// have encoded, for every value a seq or a stored time can take.

const SEQS = [1n, 127n, 128n, 300n, 16_383n, 16_384n, 2n ** 35n, 2n ** 62n, 2n ** 63n - 1n];
const TIMES = [
  undefined,
  1n,
  999_999_999n,
  1_000_000_000n,
  1_000_000_001n,
  1_764_470_000_123_456_789n,
  -1n,
  -1_000_000_000n,
  -9_223_372_036_854_775_807n, // 1677, the earliest stored time
  9_223_372_036_854_775_807n, // 2262, the latest
];

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`event fields encoded in SQL [${backend.name}]`, () => {
    let opened: OpenDatabase;
    beforeAll(async () => {
      opened = await backend.open();
    });
    afterAll(async () => {
      await opened?.close();
    });

    const transactions = async (appName: string) => {
      const { rows } = await sql<{ n: number }>`
        SELECT count(DISTINCT e.tx)::int AS n FROM events e JOIN sessions s ON s.pk = e.session_pk WHERE s.app_name = ${appName}`.execute(
        opened.db,
      );
      return rows[0]?.n;
    };

    it("decode to the seq and timestamp protobuf-es encodes", async () => {
      const prefix = toBinary(EventSchema, create(EventSchema, { id: "e1", author: "user" }));
      for (const seq of SEQS) {
        for (const ns of TIMES) {
          const { rows } = await sql<{ body: Uint8Array }>`
            SELECT ${prefix}::bytea || sessionstore_event_fields(${seq}::bigint, ${ns ?? null}::bigint) AS body`.execute(opened.db);
          const decoded = fromBinary(EventSchema, rows[0]?.body as Uint8Array);
          const expected = create(EventSchema, {
            id: "e1",
            author: "user",
            seq,
            timestamp: ns === undefined ? undefined : nsToTimestamp(ns),
          });
          expect(decoded, `seq ${seq}, time ${ns}`).toEqual(expected);
          expect(Buffer.from(rows[0]?.body as Uint8Array).length, `seq ${seq}, time ${ns}`).toBe(toBinary(EventSchema, expected).length);
        }
      }
    });

    it("is planned once per connection, not on every call (migration 0010)", async () => {
      // Under plan_cache_mode = auto its statements were planned again on
      // every call, a third of its cost (bench/PROFILE.md).
      const { rows } = await sql<{ config: string[] | null }>`
        SELECT proconfig AS config FROM pg_proc WHERE proname = 'sessionstore_append'`.execute(opened.db);
      expect(rows.map((r) => r.config)).toEqual([["plan_cache_mode=force_generic_plan"]]);
    });

    it("runs appends that name one session twice in one call in order, each seeing the one before", async () => {
      // Group commit starts the first append alone and puts the next ones,
      // submitted while it runs, into one call: the path for a repeated session.
      const store = new SessionStore(opened.db, {
        policies: loadPolicy(JSON.stringify({ defaults: { limits: { maxStateBytes: 60 } } }), undefined),
      });
      const key = { appName: "twice", userId: "u", sessionId: "s" };
      await store.createSession(key, splitState({}));
      const append = (author: string, delta: Record<string, string>, id?: string) =>
        store.appendEvent({ key, event: create(EventSchema, { author, id }), delta: splitState(delta) }).then(
          (r) => ({ seq: r.event.seq, duplicate: r.duplicate }),
          (e: unknown) => String(e),
        );
      const results = await Promise.all([
        append("a", { x: "1" }),
        append("b", { y: "2" }, "same-id"),
        append("c", { z: "y".repeat(80) }), // passes maxStateBytes: refused alone
        append("d", { x: "3" }, "same-id"), // the id of "b", in the same call: a duplicate
        append("e", { w: "4" }),
      ]);
      expect(results).toEqual([
        { seq: 1n, duplicate: false },
        { seq: 2n, duplicate: false },
        expect.stringMatching(/maxStateBytes/),
        { seq: 2n, duplicate: true },
        { seq: 3n, duplicate: false },
      ]);
      const found = await store.getSession(key, {});
      expect(found?.session.sessionState).toEqual({ x: "1", y: "2", w: "4" });
      expect(found?.events.map((e) => [e.event.seq, e.event.author])).toEqual([
        [1n, "a"],
        [2n, "b"],
        [3n, "e"],
      ]);
      // "a" alone, then "b" and "e" in one call (run again without "c").
      expect(await transactions(key.appName)).toBe(2);
    });

    it("gives each append its own answer when a call fails as a whole, a state past its cap still refused as such", async () => {
      const store = new SessionStore(opened.db, {
        policies: loadPolicy(JSON.stringify({ defaults: { limits: { maxStateBytes: 60 } } }), undefined),
      });
      const key = { appName: "fallback", userId: "u", sessionId: "s" };
      await store.createSession(key, splitState({}));
      const append = (author: string, delta: Record<string, string>) =>
        store.appendEvent({ key, event: create(EventSchema, { author }), delta: splitState(delta) }).then(
          (r) => r.event.seq,
          (e: unknown) => String(e),
        );
      // The first runs alone; the next three go together, and the NUL that
      // jsonb cannot hold fails that call before anything is written.
      const results = await Promise.all([
        append("a", { x: "1" }),
        append("nul", { y: "\u0000" }),
        append("big", { z: "y".repeat(80) }),
        append("b", { w: "2" }),
      ]);
      expect(results).toEqual([1n, expect.stringMatching(/Unicode|\\u0000/i), expect.stringMatching(/maxStateBytes/), 2n]);
      const found = await store.getSession(key, {});
      expect(found?.session.sessionState).toEqual({ x: "1", w: "2" });
    });
  });
}
