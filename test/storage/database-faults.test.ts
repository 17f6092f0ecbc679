import { createServer } from "node:net";
import { create } from "@bufbuild/protobuf";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { Unavailable } from "../../src/domain/outcomes.js";
import { splitState } from "../../src/domain/state.js";
import { type OpenDatabase, openDatabase } from "../../src/storage/database.js";
import { databaseOutcome, isConnectionLoss } from "../../src/storage/pg-errors.js";
import { SessionStore } from "../../src/storage/session-store.js";
import { postgresBackend } from "../support/backends.js";

// What the store makes of a database that is not there or goes away, with
// real failures: a refused connection, a backend terminated in the middle
// of a transaction and of an append, a closed embedded store. (Restarts
// under load: test/faults/db-restart.test.ts.)

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once `condition` holds; fails after `ms`. */
async function waitFor(condition: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("database faults as outcomes", () => {
  it("answers a refused connection as Unavailable, with nothing written, and marks the database unreachable", async () => {
    const database = await openDatabase({ databaseUrl: `postgres://nobody@127.0.0.1:${await closedPort()}/none`, migrate: false });
    try {
      const store = new SessionStore(database.db);
      const err = await store
        .appendEvent({
          key: { appName: "a", userId: "u", sessionId: "s" },
          event: create(EventSchema, { author: "user" }),
          delta: splitState(undefined),
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Unavailable);
      expect((err as Unavailable).commitUnknown).toBe(false);
      expect((err as Error).message).toMatch(/nothing was written/);
      await waitFor(() => !database.health.reachable);
    } finally {
      await database.close();
    }
  });

  it("answers queries on a closed embedded store as Unavailable", async () => {
    const pglite = new PGlite("memory://");
    const database = await openDatabase({ pglite, migrate: false });
    try {
      await pglite.close();
      const err = await sql`SELECT 1`.execute(database.db).catch((e: unknown) => e);
      expect(isConnectionLoss(err)).toBe(true);
      expect(databaseOutcome(err)).toBeInstanceOf(Unavailable);
      await waitFor(() => !database.health.reachable);
    } finally {
      await database.close();
    }
  });

  it("leaves other errors alone (a bug answers INTERNAL, not UNAVAILABLE)", async () => {
    const pglite = new PGlite("memory://");
    const database = await openDatabase({ pglite, migrate: false });
    try {
      const err = await sql`SELECT * FROM no_such_table`.execute(database.db).catch((e: unknown) => e);
      expect(isConnectionLoss(err)).toBe(false);
      expect(databaseOutcome(err)).toBeUndefined();
      expect(database.health.probes).toBe(0);
    } finally {
      await database.close();
    }
  });
});

const postgres = postgresBackend();

describe.skipIf(!postgres.available)("terminated PostgreSQL backends", () => {
  let database: OpenDatabase;
  let admin: pg.Client;
  beforeAll(async () => {
    database = await postgres.open();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.close();
  });

  const backendsWaitingOnLocks = async () => {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    return rows.map((r) => r.pid);
  };

  it("survives a checked-out connection's backend being terminated mid-transaction, and the pool carries on", async () => {
    const err = await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`SELECT pg_terminate_backend(pg_backend_pid())`.execute(trx);
      })
      .catch((e: unknown) => e);
    // The process is still here (an 'error' event with no listener would have ended it).
    expect(databaseOutcome(err)).toBeInstanceOf(Unavailable);
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(database.db);
    expect(rows[0]?.one).toBe(1);
    // A probe ran and found the database there.
    await waitFor(() => database.health.probes > 0);
    expect(database.health.reachable).toBe(true);
  });

  it("answers an append whose connection was lost after it was sent as Unavailable(commitUnknown), and a retry with its id stores it once", async () => {
    const store = new SessionStore(database.db);
    const key = { appName: "faults", userId: "u", sessionId: "s" };
    await store.createSession(key, splitState(undefined));
    // Hold the session's row so the append waits inside the database, then
    // terminate the backend running it.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM sessions WHERE id = 's' FOR UPDATE");
      const append = store
        .appendEvent({ key, event: create(EventSchema, { author: "user" }), delta: splitState(undefined) })
        .catch((e: unknown) => e);
      await waitFor(async () => (await backendsWaitingOnLocks()).length > 0);
      for (const pid of await backendsWaitingOnLocks()) await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      const err = await append;
      expect(err).toBeInstanceOf(Unavailable);
      expect((err as Unavailable).commitUnknown).toBe(true);
      const id = /event id \("([^"]+)"\)/.exec((err as Error).message)?.[1];
      expect(id).toBeDefined();
      await holder.query("ROLLBACK");

      const again = await store.appendEvent({ key, event: create(EventSchema, { id, author: "user" }), delta: splitState(undefined) });
      expect(again.duplicate).toBe(false);
      const retried = await store.appendEvent({ key, event: create(EventSchema, { id, author: "user" }), delta: splitState(undefined) });
      expect(retried.duplicate).toBe(true);
      expect(retried.event.seq).toBe(1n);
    } finally {
      await holder.end();
    }
  });
});
