import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite, types as pgliteTypes } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { vector } from "@electric-sql/pglite-pgvector";
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

/**
 * Extensions every embedded store loads: memory search needs btree_gin (one
 * GIN index over user and words) and pgvector (embeddings). On PostgreSQL
 * they are used when installed (see migrations/0006_memory.ts).
 */
export const PGLITE_EXTENSIONS = { btree_gin, vector };

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
  let unlock = () => {};
  if (!pglite) {
    const dir = options.dataDir ?? "./data";
    const dataDir = dir.startsWith("memory://") ? dir : resolve(dir);
    if (!dataDir.startsWith("memory://")) {
      mkdirSync(dataDir, { recursive: true });
      unlock = lockDataDir(dataDir);
      description = `embedded at ${dataDir}`;
    }
    pglite = new PGlite(dataDir, {
      parsers: { [pgliteTypes.INT8]: (value: string) => BigInt(value) },
      extensions: PGLITE_EXTENSIONS,
    });
  }
  try {
    await pglite.waitReady;
  } catch (err) {
    unlock();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    backend: "pglite",
    description,
    close: async () => {
      await db.destroy();
      unlock();
    },
  };
}

/**
 * PGlite does not lock its folder, and two processes on one folder would
 * corrupt it. A lock file with the owner's pid refuses the second; one left by
 * a process that died is taken over.
 */
const lockedHere = new Set<string>();

function lockDataDir(dataDir: string): () => void {
  const path = `${dataDir}/sessionstore.lock`;
  if (lockedHere.has(dataDir)) throw new Error(`the embedded store at ${dataDir} is in use by process ${process.pid} (this one)`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      lockedHere.add(dataDir);
      return () => {
        lockedHere.delete(dataDir);
        try {
          unlinkSync(path);
        } catch {}
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = Number(readFileSync(path, "utf8").trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(
          `the embedded store at ${dataDir} is in use by process ${owner}; use another SESSIONSTORE_DATA_DIR or PostgreSQL for several servers`,
        );
      }
      // Stale: its process is gone (or its pid is now ours, which only a
      // process that died can have left).
      writeFileSync(path, "");
      unlinkSync(path);
    }
  }
  throw new Error(`could not lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
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
