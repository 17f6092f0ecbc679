import { type Kysely, Migrator } from "kysely";
import { migrations } from "./migrations/index.js";

/**
 * Brings the schema up to date. Kysely's Postgres adapter takes a
 * transaction-scoped advisory lock around the run, so replicas that start at
 * the same moment apply each migration exactly once.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: "sessionstore_migrations",
    migrationLockTableName: "sessionstore_migrations_lock",
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
