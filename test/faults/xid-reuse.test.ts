import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { createCluster, findPgBinDir, type PgCluster } from "../support/pg-cluster.js";
import { type ServerProcess, startServerProcess } from "../support/server-process.js";
import { TailRecorder } from "../support/tail.js";
import { pause } from "../support/wait.js";

// After a crash, PostgreSQL may hand out again transaction ids that left
// nothing durable behind: a transaction that only took an id (a NOTIFY's own
// transaction does) commits without flushing, so the crash forgets it. A
// cursor of an app-wide tail that pointed past such ids, as one derived from
// the watermark did, then skipped the rows of the transactions that reused
// them, and the tail missed events for good. The cluster is the test's own,
// with a WAL writer that flushes such commits only every 10 s, so the crash
// reliably comes first.

const binDir = findPgBinDir();
const required = process.env.SESSIONSTORE_REQUIRE_POSTGRES === "1";
const APP = "xid-reuse";

describe.skipIf(!binDir && !required)("app-wide tails across a crash that reuses transaction ids", () => {
  let cluster: PgCluster;
  let server: ServerProcess;

  beforeAll(async () => {
    if (!binDir) throw new Error("SESSIONSTORE_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries (initdb, pg_ctl) are installed");
    cluster = await createCluster(binDir, { wal_writer_delay: "10s" });
    await cluster.start();
    server = await startServerProcess({ DATABASE_URL: cluster.url, SESSIONSTORE_LOG_LEVEL: "info", SESSIONSTORE_FEED_POLL_MS: "100" });
  });

  afterAll(async () => {
    server?.kill();
    await cluster?.destroy();
  });

  it("resumes from a cursor taken before the crash and delivers the events written after it", { timeout: 180_000 }, async () => {
    const client = createClient(SessionService, createGrpcTransport({ baseUrl: server.url }));
    const appendRetrying = async (sessionId: string, id: string) => {
      for (;;) {
        try {
          return await client.appendEvent({ appName: APP, userId: "u", sessionId, event: { id, author: "user" } }, { timeoutMs: 10_000 });
        } catch (err) {
          if (!(err instanceof ConnectError && err.code === Code.Unavailable)) throw err;
          await pause(50);
        }
      }
    };
    const sql = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
      const db = new pg.Client({ connectionString: cluster.url });
      db.on("error", () => {});
      await db.connect();
      try {
        return (await db.query<R>(text, values)).rows;
      } finally {
        await db.end();
      }
    };

    // Whether the crash forgets the ids depends on the WAL writer not
    // waking between the burn and the crash; each try is a fresh session.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const sessionId = `s${attempt}`;
      await client.createSession({ appName: APP, userId: "u", sessionId });
      await appendRetrying(sessionId, `${sessionId}-before`);

      // Transactions that take an id and write nothing, each committed without a flush.
      let burned = 0n;
      for (let i = 0; i < 5; i++) burned = BigInt((await sql<{ x: string }>("SELECT pg_current_xact_id()::text AS x"))[0]?.x ?? "0");

      // A tail that starts now reads with a snapshot past the burned ids;
      // its caught_up cursor is where a client would resume.
      const before = new TailRecorder(client, { appName: APP });
      await before.until((r) => r.caughtUp, 30_000);
      const cursor = before.lastCursor as string;
      before.cancel();

      await cluster.stop("immediate");
      await cluster.start();
      await appendRetrying(sessionId, `${sessionId}-after`);
      const [row] = await sql<{ tx: string }>("SELECT tx::text AS tx FROM events WHERE event_id = $1", [`${sessionId}-after`]);
      if (BigInt(row?.tx ?? "0") > burned) continue; // the ids were flushed before the crash: nothing was reused

      const resumed = new TailRecorder(client, { appName: APP, start: { case: "cursor", value: cursor } });
      await resumed.until((r) => r.events.some((e) => e.event?.id === `${sessionId}-after`), 30_000);
      resumed.cancel();
      expect(resumed.events.map((e) => e.event?.id).filter((id) => id?.startsWith(sessionId))).toEqual([`${sessionId}-after`]);
      return;
    }
    throw new Error("three crashes in a row kept every burned transaction id: the reuse this test is about never happened");
  });
});
