import { PGlite, types } from "@electric-sql/pglite";
import { inject } from "vitest";
import { type OpenDatabase, openDatabase, PGLITE_EXTENSIONS } from "../../src/storage/database.js";
import { createTestDatabase } from "./postgres.js";

export interface TestBackend {
  name: "pglite" | "postgres";
  /** False when this run has no Postgres (never in CI, which requires it). */
  available: boolean;
  /** A fresh, migrated, empty database. */
  open(): Promise<OpenDatabase>;
}

export const pgliteBackend: TestBackend = {
  name: "pglite",
  available: true,
  async open() {
    const pglite = new PGlite("memory://", {
      parsers: { [types.INT8]: (value: string) => BigInt(value) },
      extensions: PGLITE_EXTENSIONS,
    });
    return openDatabase({ pglite });
  },
};

export function postgresBackend(): TestBackend {
  const adminUrl = inject("postgresAdminUrl");
  return {
    name: "postgres",
    available: adminUrl !== "",
    async open() {
      const created = await createTestDatabase(adminUrl);
      const opened = await openDatabase({ databaseUrl: created.url, poolSize: 10, migrate: false });
      return {
        ...opened,
        close: async () => {
          await opened.close();
          await created.drop();
        },
      };
    },
  };
}

/** The backends every contract test runs against. */
export function backends(): TestBackend[] {
  return [pgliteBackend, postgresBackend()];
}
