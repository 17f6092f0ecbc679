import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createSessionStoreClient } from "../../src/client/create-client.js";
import { defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { startServer } from "../../src/server/server.js";
import { openDatabase } from "../../src/storage/database.js";
import { migrateTo } from "../../src/storage/migrate.js";
import { migrations } from "../../src/storage/migrations/index.js";
import { backends, postgresBackend } from "../support/backends.js";
import { cli, jsonLines, startCli } from "../support/cli.js";
import { createTestDatabase } from "../support/postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";

const pg = postgresBackend();
const names = Object.keys(migrations);
const last = names.at(-1) as string;

describe.skipIf(!pg.available)("doctor and migrate on PostgreSQL", () => {
  let target: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    // An older schema: every migration but the last.
    target = await createTestDatabase(inject("postgresAdminUrl"), null);
    const opened = await openDatabase({ databaseUrl: target.url, migrate: false, poolSize: 2 });
    await migrateTo(opened.db as Kysely<unknown>, names.at(-2) as string);
    await opened.close();
  });
  afterAll(() => target?.drop());

  it("doctor reports a pending migration in plain words, migrate applies it, then doctor finds nothing", async () => {
    const before = await cli(["doctor"], { DATABASE_URL: target.url });
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(
      new RegExp(`PROBLEM {2}migrations: 1 migration is not applied yet \\(${last}\\): run 'sessionstore migrate apply'`),
    );
    expect(before.stdout).toMatch(/ok +database: PostgreSQL \d+/);
    expect(before.stdout).toMatch(/ok +permissions: the role sessionstore may create tables/);
    expect(before.stdout).toMatch(/1 problem found\n$/);

    const status = await cli(["migrate", "status", "--database-url", target.url]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(new RegExp(`applied {2}${names.at(-2)} {2}\\d{4}-`));
    expect(status.stdout).toContain(`pending  ${last}\n`);

    const apply = await cli(["migrate", "apply", "--database-url", target.url]);
    expect(apply.code).toBe(0);
    expect(apply.stdout).toBe(`applied ${last}\n1 applied; up to date\n`);
    expect((await cli(["migrate", "apply", "--database-url", target.url])).stdout).toBe("nothing to apply; up to date\n");

    const after = await cli(["doctor", "--database-url", target.url]);
    expect(after.stdout).toContain(`migrations: all ${names.length} applied`);
    expect(after.stdout).toMatch(/no problems found\n$/);
    expect(after.code).toBe(0);
  });
});

describe("doctor", () => {
  it("reports an unreachable database in plain words and exits 1", async () => {
    const run = await cli(["doctor"], { DATABASE_URL: "postgres://sessionstore:secret@127.0.0.1:1/nowhere" });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      "PROBLEM  database: cannot reach the database: nothing accepts connections at 127.0.0.1:1 (is PostgreSQL running there, and is DATABASE_URL right?)",
    );
    expect(run.stdout).not.toContain("secret");
  });

  it("reports bad configuration, missing tokens off loopback and half a TLS setup, each in words", async () => {
    const bad = await cli(["doctor"], { SESSIONSTORE_PORT: "abc" });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/PROBLEM {2}configuration: SESSIONSTORE_PORT must be an integer from 0 to 65535, got "abc"/);
    const dir = mkdtempSync(join(tmpdir(), "sessionstore-doctor-"));
    try {
      const open = await cli(["doctor", "--host", "0.0.0.0", "--data-dir", join(dir, "store"), "--tls-cert", join(dir, "cert.pem")]);
      expect(open.code).toBe(1);
      expect(open.stdout).toMatch(/PROBLEM {2}tokens: none configured, and the server refuses to listen on 0\.0\.0\.0 without them/);
      expect(open.stdout).toMatch(/PROBLEM {2}TLS: only the certificate is set: TLS needs both/);
      expect(open.stdout).toMatch(/PROBLEM {2}migrations: the database is empty/);
      expect(open.stdout).toMatch(/3 problems found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect((await cli(["doctor", "--bogus"])).code).toBe(2);
  });
});

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`tail on ${backend.name}`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer(backend);
    });
    afterAll(() => t?.close());

    it("resumes from its cursor after the server restarts, missing nothing and repeating nothing", async () => {
      const key = { appName: "tail-app", userId: "u1", sessionId: "s1" };
      await t.client.createSession(key);
      const append = (client: TestServer["client"], id: string) =>
        client.appendEvent({ ...key, event: { id, author: "agent", content: { parts: [{ data: { case: "text", value: id } }] } } });
      await append(t.client, "e1");
      const tail = startCli([
        "tail",
        "-a",
        key.appName,
        "-u",
        key.userId,
        "-s",
        key.sessionId,
        "--from-start",
        "--json",
        "--server",
        t.server.url,
      ]);
      await append(t.client, "e2");
      await tail.waitFor(/"id":"e2"/);

      const { port, host } = t.server;
      await t.server.close();
      // While this port is down, another replica on the same database takes an append.
      const other = await startServer(
        { ...defaults, host, port: 0, shutdownGraceMs: 1000 },
        { logger: silentLogger, database: t.database },
      );
      await append(createSessionStoreClient(other.url), "e3");
      await other.close();
      // The server comes back on its port.
      t.server = await startServer({ ...defaults, host, port, shutdownGraceMs: 1000 }, { logger: silentLogger, database: t.database });
      await append(createSessionStoreClient(t.server.url), "e4");
      await tail.waitFor(/"id":"e4"/);
      tail.stop();
      expect(await tail.code).toBe(0);

      const events = jsonLines(tail.stdout())
        .filter((l) => l.event)
        .map((l) => (l.event as { event: { id: string; seq: string } }).event);
      expect(events.map((e) => [e.id, e.seq])).toEqual([
        ["e1", "1"],
        ["e2", "2"],
        ["e3", "3"],
        ["e4", "4"],
      ]);
      expect(tail.stderr()).toMatch(/connection lost .*reconnecting/);
      expect(tail.stderr()).toMatch(/reconnected/);
    });
  });
}
