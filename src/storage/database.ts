import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite, types as pgliteTypes } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { migrateToLatest } from "./migrate.js";
import { PGliteDialect } from "./pglite-dialect.js";
import type { Database } from "./schema.js";

export type Backend = "postgres" | "pglite";

export interface OpenDatabase {
  db: Kysely<Database>;
  backend: Backend;
  /** What to print at start: the URL without its password, or the folder. */
  description: string;
  /** The Postgres URL, for connections outside the pool (LISTEN). */
  url?: string | undefined;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Postgres URL; unset opens the embedded store in `dataDir`. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded store; `memory://` keeps it in memory. */
  dataDir?: string;
  /** An already open PGlite (tests clone one from a migrated template). */
  pglite?: PGlite;
  poolSize?: number;
  migrate?: boolean;
}

const INT8_OID = 20;

export async function openDatabase(options: OpenOptions): Promise<OpenDatabase> {
  const opened = options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 20) : await openPGlite(options);
  if (options.migrate !== false) {
    try {
      await migrateToLatest(opened.db as Kysely<unknown>);
    } catch (err) {
      await opened.close();
      throw err;
    }
  }
  return opened;
}

function openPostgres(url: string, poolSize: number): OpenDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // int8 as bigint: nanosecond times do not fit a double.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A broken idle connection must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, backend: "postgres", description: redactUrl(url), url, close: () => db.destroy() };
}

async function openPGlite(options: OpenOptions): Promise<OpenDatabase> {
  let pglite = options.pglite;
  let description = "embedded (in memory)";
  if (!pglite) {
    const dir = options.dataDir ?? "./data";
    const dataDir = dir.startsWith("memory://") ? dir : resolve(dir);
    if (!dataDir.startsWith("memory://")) {
      mkdirSync(dataDir, { recursive: true });
      description = `embedded at ${dataDir}`;
    }
    pglite = new PGlite(dataDir, { parsers: { [pgliteTypes.INT8]: (value: string) => BigInt(value) } });
  }
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, backend: "pglite", description, close: () => db.destroy() };
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres (unparseable URL)";
  }
}
