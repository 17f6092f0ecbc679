import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { describe, expect, inject, it } from "vitest";
import { splitState } from "../../src/domain/state.js";
import { openDatabase } from "../../src/storage/database.js";
import { migrations } from "../../src/storage/migrations/index.js";
import { SessionStore } from "../../src/storage/session-store.js";
import { createTestDatabase } from "../support/postgres.js";

const adminUrl = inject("postgresAdminUrl");

describe.skipIf(adminUrl === "")("migrations on Postgres", () => {
  it("apply exactly once when several replicas start at the same moment", async () => {
    const created = await createTestDatabase(adminUrl, null);
    try {
      const replicas = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ databaseUrl: created.url, poolSize: 2 })));
      const applied = await sql<{ name: string }>`SELECT name FROM sessionstore_migrations ORDER BY name`.execute(replicas[0]?.db as never);
      expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
      // Every replica can use the schema.
      await Promise.all(
        replicas.map((r, i) => new SessionStore(r.db).createSession({ appName: "a", userId: "u", sessionId: `s${i}` }, splitState({}))),
      );
      await Promise.all(replicas.map((r) => r.close()));
    } finally {
      await created.drop();
    }
  });
});

describe("the embedded store", () => {
  it("refuses a second opener of the same folder while the first holds it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessionstore-lock-"));
    try {
      const first = await openDatabase({ dataDir: dir });
      await expect(openDatabase({ dataDir: dir })).rejects.toThrow(/in use by process/);
      await first.close();
      const again = await openDatabase({ dataDir: dir });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("persists to its folder across restarts and migrates idempotently", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessionstore-pglite-"));
    try {
      const first = await openDatabase({ dataDir: dir });
      await new SessionStore(first.db).createSession({ appName: "a", userId: "u", sessionId: "kept" }, splitState({ x: 1, "user:y": 2 }));
      await first.close();
      const second = await openDatabase({ dataDir: dir });
      const found = await new SessionStore(second.db).getSession({ appName: "a", userId: "u", sessionId: "kept" }, {});
      expect(found?.session.sessionState).toEqual({ x: 1 });
      expect(found?.session.userState).toEqual({ y: 2 });
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
