import { copyFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Session, SessionSchema } from "../../gen/ts/sessionstore/v1/session_pb.js";
import { defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { startServer } from "../../src/server/server.js";
import { postgresBackend } from "../support/backends.js";
import { cli } from "../support/cli.js";
import { createTestDatabase } from "../support/postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";

type Client = TestServer["client"];

async function seed(client: Client) {
  for (const app of ["shop", "bank"]) {
    for (const user of ["ann", "ben"]) {
      for (const n of [1, 2]) {
        const sessionId = `${user}-${n}`;
        await client.createSession({
          appName: app,
          userId: user,
          sessionId,
          state: { "app:region": "eu", "user:lang": `${user}-lang`, step: 0 },
        });
        const key = { appName: app, userId: user, sessionId };
        for (let i = 1; i <= 3 + n; i++) {
          await client.appendEvent({
            ...key,
            event: {
              id: `${sessionId}-e${i}`,
              author: i % 2 ? "user" : "agent",
              invocationId: `inv-${Math.ceil(i / 2)}`,
              // A time with nanoseconds, which must survive both stores.
              timestamp: { ...timestampFromMs(1_764_560_000_000 + i * 1000), nanos: 123_456_789 },
              content: {
                role: i % 2 ? "user" : "model",
                parts:
                  i % 3 === 0
                    ? [
                        {
                          data: { case: "functionCall", value: { id: `c${i}`, name: "lookup", args: { q: `item ${i}`, deep: { n: i } } } },
                        },
                        {
                          data: {
                            case: "inlineData",
                            value: { mimeType: "application/octet-stream", data: new Uint8Array([0, 1, 2, 255, i]) },
                          },
                        },
                      ]
                    : [{ data: { case: "text", value: `message ${i} of ${sessionId}` } }],
              },
              actions: { stateDelta: { step: i, [`user:seen-${i}`]: true, ...(i === 2 ? { "app:last": sessionId } : {}) } },
              usageMetadata: { promptTokenCount: i * 10 },
              ...(i === 4 ? { errorCode: "E_TOOL", errorMessage: "tool failed", branch: "root.sub" } : {}),
            },
          });
        }
      }
    }
  }
  await client.forkSession({ appName: "shop", userId: "ann", sessionId: "ann-2", upToSeq: 3n, newSessionId: "ann-fork" });
  // A user whose sessions are gone still has user state.
  await client.createSession({ appName: "shop", userId: "cyd", sessionId: "gone", state: { "user:kept": 1 } });
  await client.deleteSession({ appName: "shop", userId: "cyd", sessionId: "gone" });
}

/** Everything a client can read, in a form to compare across servers. */
async function listing(client: Client) {
  const out: Record<string, unknown> = {};
  for (const app of ["shop", "bank"]) {
    const { sessions } = await client.listSessions({ appName: app, pageSize: 1000 });
    out[`${app} list`] = sessions.map((s) => toJson(SessionSchema, s));
    for (const s of sessions) {
      const key = { appName: app, userId: s.userId, sessionId: s.id };
      out[`${app}/${s.userId}/${s.id}`] = toJson(SessionSchema, (await client.getSession(key)).session as Session);
      out[`${app}/${s.userId}/${s.id} as created`] = toJson(
        SessionSchema,
        (await client.getSession({ ...key, asOfSeq: 0n })).session as Session,
      );
    }
    for (const user of ["ann", "ben", "cyd"])
      out[`${app}/${user} state`] = (await client.getUserState({ appName: app, userId: user })).state;
  }
  return out;
}

const pg = postgresBackend();

describe.skipIf(!pg.available)("export and import between PostgreSQL and the embedded store", () => {
  let source: TestServer;
  let dir: string;
  let expected: Record<string, unknown>;
  let full: string;
  beforeAll(async () => {
    source = await startTestServer(pg);
    await seed(source.client);
    expected = await listing(source.client);
    dir = mkdtempSync(join(tmpdir(), "sessionstore-transfer-"));
    full = join(dir, "full.jsonl");
  });
  afterAll(async () => {
    await source?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function serveEmbedded<T>(dataDir: string, fn: (client: Client) => Promise<T>): Promise<T> {
    const server = await startServer({ ...defaults, port: 0, dataDir }, { logger: silentLogger });
    const { createSessionStoreClient } = await import("../../src/client/create-client.js");
    try {
      return await fn(createSessionStoreClient(server.url));
    } finally {
      await server.close();
    }
  }

  it("exports from PostgreSQL while the server runs, imports into the embedded store: the same listing", async () => {
    const exported = await cli(["export", "--database-url", source.database.url as string, "--output", full]);
    expect(exported.stderr).toMatch(/exported 9 sessions, 39 events/);
    expect(exported.code).toBe(0);
    const lines = readFileSync(full, "utf8").trim().split("\n");
    expect(JSON.parse(lines[0] as string)).toMatchObject({ kind: "header", format: "sessionstore-export", version: 1 });
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ kind: "end", appStates: 2, userStates: 5, sessions: 9, events: 39 });

    const store = join(dir, "embedded");
    const imported = await cli(["import", full, "--data-dir", store]);
    expect(imported.stderr).toMatch(/^imported 9 sessions, 39 events, 7 states \(\d+ events\/s\)\n$/);
    expect(imported.code).toBe(0);
    // Again: everything is there already, nothing changes.
    const again = await cli(["import", "--input", full, "--data-dir", store]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/imported 0 sessions, 0 events, 0 states .*9 sessions were already there and were skipped/);

    expect(await serveEmbedded(store, listing)).toEqual(expected);

    // And back out of the embedded store: the same file, byte for byte, but for the header's time.
    const back = join(dir, "back.jsonl");
    expect((await cli(["export", "--data-dir", store, "-o", back])).code).toBe(0);
    const body = (file: string) => readFileSync(file, "utf8").split("\n").slice(1).join("\n");
    expect(body(back)).toBe(body(full));
  });

  it("an interrupted export continues with --resume and ends as the whole export", async () => {
    const partial = join(dir, "partial.jsonl");
    copyFileSync(full, partial);
    const text = readFileSync(full, "utf8");
    // Cut in the middle of an event line of some session.
    const cut = text.indexOf('"kind":"event"', Math.floor(text.length / 2)) + 5;
    truncateSync(partial, cut);
    const resumed = await cli(["export", "--database-url", source.database.url as string, "--output", partial, "--resume"]);
    expect(resumed.code).toBe(0);
    expect(readFileSync(partial, "utf8")).toBe(text);
    const done = await cli(["export", "--database-url", source.database.url as string, "--output", partial, "--resume"]);
    expect(done.stderr).toMatch(/already a complete export/);
  });

  it("an interrupted import fails saying so, keeps whole sessions only, and a repeat completes it", async () => {
    const target = await createTestDatabase(inject("postgresAdminUrl"), null);
    try {
      const cutFile = join(dir, "cut.jsonl");
      const text = readFileSync(full, "utf8");
      writeFileSync(cutFile, text.slice(0, text.indexOf('"kind":"event"', Math.floor(text.length / 2)) + 20));
      const cut = await cli(["import", cutFile, "--database-url", target.url]);
      expect(cut.code).toBe(1);
      expect(cut.stderr).toMatch(/line \d+ is not JSON \(a file cut short\?\)/);
      const whole = await cli(["import", full, "--database-url", target.url]);
      expect(whole.code).toBe(0);
      expect(whole.stderr).toMatch(/sessions were already there and were skipped/);
      const server = await startServer({ ...defaults, port: 0, databaseUrl: target.url }, { logger: silentLogger });
      try {
        const { createSessionStoreClient } = await import("../../src/client/create-client.js");
        expect(await listing(createSessionStoreClient(server.url))).toEqual(expected);
      } finally {
        await server.close();
      }
    } finally {
      await target.drop();
    }
  });

  it("refuses what is not an export, and wrong usage", async () => {
    const bogus = join(dir, "bogus.jsonl");
    writeFileSync(bogus, '{"kind":"session"}\n');
    const run = await cli(["import", bogus, "--data-dir", "memory://"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not a sessionstore export/);
    expect((await cli(["import", join(dir, "missing.jsonl")])).stderr).toMatch(/no such file/);
    expect((await cli(["export", "--resume"])).code).toBe(2);
    expect((await cli(["export", "--user", "u"])).stderr).toMatch(/--user needs --app/);
  });
});
