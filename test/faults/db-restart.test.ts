import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../gen/ts/grpc/health/v1/health_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { createCluster, findPgBinDir, type PgCluster } from "../support/pg-cluster.js";
import { type ServerProcess, startServerProcess } from "../support/server-process.js";
import { pause, waitFor } from "../support/wait.js";

// The database restarts and loses connections under load, and the server
// rides it out: it stays up, answers OK or UNAVAILABLE and nothing else,
// stores every acknowledged append exactly once with gapless seqs (writers
// retry UNAVAILABLE with the same event id, as the clients do), takes
// appends again within 5 s of the database's return, and tails resumed from
// their cursors see every event once. The cluster is the test's own.

const binDir = findPgBinDir();
const required = process.env.SESSIONSTORE_REQUIRE_POSTGRES === "1";

const WRITERS = 16;
const SESSIONS = 4;
const APP = "faults";
const USER = "u";
/** Appends work again within this long of the database's return. */
const RECOVERY_MS = 5000;
const CALL_TIMEOUT_MS = 30_000;

describe.skipIf(!binDir && !required)("the server across database restarts and terminated connections", () => {
  let cluster: PgCluster;
  let server: ServerProcess;

  beforeAll(async () => {
    if (!binDir) throw new Error("SESSIONSTORE_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries (initdb, pg_ctl) are installed");
    cluster = await createCluster(binDir);
    await cluster.start();
    server = await startServerProcess({
      DATABASE_URL: cluster.url,
      SESSIONSTORE_LOG_LEVEL: "info",
      SESSIONSTORE_POOL_SIZE: "10",
      SESSIONSTORE_FEED_POLL_MS: "200",
    });
  });

  afterAll(async () => {
    server?.kill();
    await cluster?.destroy();
  });

  it("stays up, answers OK or UNAVAILABLE, loses and duplicates nothing, and recovers within seconds", { timeout: 300_000 }, async () => {
    const transport = createGrpcTransport({ baseUrl: server.url });
    const client = createClient(SessionService, transport);
    const health = createClient(Health, transport);
    const sessions = Array.from({ length: SESSIONS }, (_, i) => `s${i}`);
    for (const sessionId of sessions) await client.createSession({ appName: APP, userId: USER, sessionId });

    const unexpected: string[] = [];
    let unavailable = 0;
    const note = (where: string, err: unknown) => {
      const code = err instanceof ConnectError ? err.code : undefined;
      if (code === Code.Unavailable) unavailable++;
      else unexpected.push(`${where}: ${code === undefined ? String(err) : `${Code[code]} ${(err as ConnectError).rawMessage}`}`);
    };

    // Writers: append with an id fixed before the first try, and retry
    // UNAVAILABLE with it until acknowledged.
    const acknowledged = new Set<string>();
    const attempted = new Set<string>();
    let stopWriting = false;
    const appendUntilAcknowledged = async (sessionId: string, id: string, deadline = Number.POSITIVE_INFINITY) => {
      attempted.add(id);
      for (let attempt = 0; ; attempt++) {
        try {
          await client.appendEvent(
            { appName: APP, userId: USER, sessionId, event: { id, author: "writer" } },
            { timeoutMs: CALL_TIMEOUT_MS },
          );
          acknowledged.add(id);
          return;
        } catch (err) {
          note(`append ${id}`, err);
          if (!(err instanceof ConnectError && err.code === Code.Unavailable) || Date.now() > deadline) throw err;
          await pause(Math.min(20 * 2 ** attempt, 250) * (0.5 + Math.random() / 2));
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const sessionId = sessions[w % SESSIONS] as string;
      for (let n = 0; !stopWriting; n++) {
        await appendUntilAcknowledged(sessionId, `w${w}-${n}`).catch(() => {});
      }
    });

    // Tails: one per session, one of the whole app; each resumes from its
    // last cursor whenever its stream ends.
    const stopTails = new AbortController();
    const tails = [...sessions.map((sessionId) => ({ sessionId })), { sessionId: undefined }].map(({ sessionId }) => {
      const tail = { sessionId, events: [] as { sessionId: string; seq: bigint; id: string }[], resumes: 0, done: Promise.resolve() };
      tail.done = (async () => {
        let cursor: string | undefined;
        while (!stopTails.signal.aborted) {
          try {
            const stream = client.streamEvents(
              {
                appName: APP,
                userId: sessionId === undefined ? "" : USER,
                sessionId: sessionId ?? "",
                start: cursor === undefined ? { case: undefined } : { case: "cursor", value: cursor },
                heartbeatInterval: { seconds: 0n, nanos: 200_000_000 },
              },
              { signal: stopTails.signal },
            );
            for await (const res of stream) {
              const kind = res.kind;
              if (kind.case === "event") {
                const e = kind.value.event;
                tail.events.push({ sessionId: kind.value.sessionId, seq: e?.seq ?? 0n, id: e?.id ?? "" });
              }
              if (kind.case === "event" || kind.case === "caughtUp" || kind.case === "heartbeat") cursor = kind.value.cursor;
            }
            unexpected.push(`tail ${sessionId ?? "app"} ended without a status`);
          } catch (err) {
            if (stopTails.signal.aborted) return;
            note(`tail ${sessionId ?? "app"}`, err);
            tail.resumes++;
            await pause(50 + Math.random() * 100);
          }
        }
      })();
      return tail;
    });

    const serving = async () => (await health.check({ service: "" }, { timeoutMs: 2000 })).status;
    const alive = () => server.assertAlive();
    /** A fresh append is acknowledged within RECOVERY_MS of the database's return (`back`). */
    const appendsWorkAgain = async (label: string, back: number) => {
      await appendUntilAcknowledged(sessions[0] as string, `probe-${label}`, back + RECOVERY_MS);
      expect(Date.now() - back, `appends worked again ${Date.now() - back} ms after ${label}`).toBeLessThanOrEqual(RECOVERY_MS);
    };

    await waitFor("writers get going", () => acknowledged.size >= 200, 60_000, alive);
    const faults: ("fast" | "immediate" | "terminate")[] = ["fast", "terminate", "immediate", "terminate", "fast", "immediate"];
    for (const [i, fault] of faults.entries()) {
      const before = acknowledged.size;
      if (fault === "terminate") {
        expect(await cluster.terminateBackends()).toBeGreaterThan(0);
        await appendsWorkAgain(`${fault} #${i}`, Date.now());
      } else {
        await cluster.stop(fault);
        // While it is down the server says so, without a query per check.
        await waitFor("health reports NOT_SERVING", async () => (await serving()) === Serving.NOT_SERVING, 20_000, alive);
        alive();
        await cluster.start();
        await appendsWorkAgain(`${fault} #${i}`, Date.now());
        await waitFor("health reports SERVING", async () => (await serving()) === Serving.SERVING, 20_000, alive);
      }
      alive();
      await waitFor("writers make progress", () => acknowledged.size >= before + 50, 60_000, alive);
    }

    stopWriting = true;
    await Promise.all(writers);
    alive();
    expect(unexpected, unexpected.slice(0, 20).join("\n")).toEqual([]);
    expect(unavailable).toBeGreaterThan(0);

    // Every acknowledged append is stored once; seqs are gapless; nothing
    // is stored that no writer sent.
    const stored = new Map<string, string[]>();
    for (const sessionId of sessions) {
      const ids: string[] = [];
      let pageToken = "";
      do {
        const page = await client.listEvents({ appName: APP, userId: USER, sessionId, pageSize: 1000, pageToken });
        for (const e of page.events) {
          expect(e.seq, `seq of event ${ids.length + 1} in ${sessionId}`).toBe(BigInt(ids.length + 1));
          ids.push(e.id);
        }
        pageToken = page.nextPageToken;
      } while (pageToken);
      stored.set(sessionId, ids);
    }
    const all = [...stored.values()].flat();
    expect(new Set(all).size, "no event id is stored twice").toBe(all.length);
    const storedIds = new Set(all);
    expect(
      [...acknowledged].filter((id) => !storedIds.has(id)),
      "acknowledged but not stored",
    ).toEqual([]);
    expect(
      all.filter((id) => !attempted.has(id)),
      "stored but never sent",
    ).toEqual([]);

    // Tails, resumed from their cursors, saw exactly what is stored, in order.
    for (const tail of tails) {
      const expected = tail.sessionId === undefined ? all.length : (stored.get(tail.sessionId) ?? []).length;
      await waitFor(`tail ${tail.sessionId ?? "app"} catches up`, () => tail.events.length >= expected, 60_000).catch((err: Error) => {
        throw new Error(`${err.message} (${tail.events.length} of ${expected} events, ${tail.resumes} resumes)`);
      });
    }
    stopTails.abort();
    await Promise.all(tails.map((t) => t.done));
    for (const tail of tails) {
      const bySession = new Map<string, string[]>();
      for (const e of tail.events) {
        const seen = bySession.get(e.sessionId) ?? [];
        expect(e.seq, `tail ${tail.sessionId ?? "app"}: seq in ${e.sessionId}`).toBe(BigInt(seen.length + 1));
        seen.push(e.id);
        bySession.set(e.sessionId, seen);
      }
      for (const [sessionId, ids] of bySession) expect(ids).toEqual(stored.get(sessionId));
      if (tail.sessionId === undefined) expect(tail.events.length).toBe(all.length);
    }
    // Resumption was exercised: tails meet the outages (through the feed's
    // poll) and end UNAVAILABLE, rather than only riding through.
    expect(tails.some((t) => t.resumes > 0)).toBe(true);
    expect(await serving()).toBe(Serving.SERVING);
    alive();
  });
});
