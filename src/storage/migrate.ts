import { type Kysely, Migrator, sql } from "kysely";
import { migrations } from "./migrations/index.js";

const MIGRATION_TABLE = "sessionstore_migrations";

function migrator(db: Kysely<unknown>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: "sessionstore_migrations_lock",
  });
}

/**
 * Brings the schema up to date. Kysely's Postgres adapter takes a
 * transaction-scoped advisory lock around the run, so replicas that start at
 * the same moment apply each migration exactly once.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Applies the migrations up to and including `name` (tests make older schemas with it). */
export async function migrateTo(db: Kysely<unknown>, name: string): Promise<void> {
  const { error } = await migrator(db).migrateTo(name);
  if (error) throw error instanceof Error ? error : new Error(String(error));
}

export interface MigrationState {
  applied: { name: string; at: Date }[];
  /** Known to this version, not applied yet, in the order they run. */
  pending: string[];
  /** Applied, but unknown to this version: a newer Sessionstore migrated the database. */
  unknown: string[];
}

/** What is applied and what is not, without changing anything. */
export async function migrationState(db: Kysely<unknown>): Promise<MigrationState> {
  const exists = await sql<{ t: string | null }>`SELECT to_regclass(${MIGRATION_TABLE})::text AS t`.execute(db);
  const rows =
    exists.rows[0]?.t == null
      ? []
      : (await sql<{ name: string; timestamp: string }>`SELECT name, timestamp FROM sessionstore_migrations ORDER BY name`.execute(db))
          .rows;
  const known = Object.keys(migrations);
  const applied = new Set(rows.map((r) => r.name));
  return {
    applied: rows.filter((r) => known.includes(r.name)).map((r) => ({ name: r.name, at: new Date(r.timestamp) })),
    pending: known.filter((n) => !applied.has(n)),
    unknown: rows.map((r) => r.name).filter((n) => !known.includes(n)),
  };
}
