import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite, types as pgliteTypes } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { vector } from "@electric-sql/pglite-pgvector";
import { Kysely, PostgresDialect, type PostgresPoolClient } from "kysely";
import pg from "pg";
import { traceQuery } from "../tracing/sql-spans.js";
import { tracingEnabled } from "../tracing/tracing.js";
import { DatabaseHealth } from "./database-health.js";
import { lockDataDir } from "./embedded-lock.js";
import { migrateToLatest } from "./migrate.js";
import { isConnectionLoss } from "./pg-errors.js";
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
  /** Whether the database can be reached; whatever else holds a connection reports what it sees here too. */
  health: DatabaseHealth;
  /** PostgreSQL's connection pool, as pg counts it (for metrics); the embedded store has none. */
  pool?: PoolCounts | undefined;
  close(): Promise<void>;
}

export interface PoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
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

/**
 * How long a new connection may take: past it a call answers UNAVAILABLE
 * instead of hanging while the database is unreachable (a peer that vanished
 * answers nothing at all). Waiting for a busy pool's connection is not
 * bounded by it: that is load, not an outage.
 */
const CONNECT_TIMEOUT_MS = 5000;

class BoundedClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

function openPostgres(url: string, poolSize: number): OpenDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    Client: BoundedClient,
    // A peer that vanished without closing (a failover, a cut network) is found by the OS.
    keepAlive: true,
    // int8 as bigint: nanosecond times do not fit a double.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const health = new DatabaseHealth(() => probePostgres(url));
  // pg-pool listens for errors only on idle clients: a checked-out client
  // whose connection breaks (a restart, pg_terminate_backend) emits 'error'
  // with no listener, which ends the process. So every client listens for
  // its whole life; its query fails, and the pool drops it on release.
  pool.on("connect", (client) => client.on("error", (err) => health.observe(err)));
  pool.on("error", (err) => health.observe(err));
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: {
        connect: async () => {
          let client: pg.PoolClient;
          try {
            client = await pool.connect();
          } catch (err) {
            health.observe(err);
            throw err;
          }
          return discardingBroken(client, (err) => health.observe(err));
        },
        end: () => pool.end(),
      },
    }),
    log: sqlLog(),
  });
  return {
    db,
    backend: "postgres",
    description: redactUrl(url),
    url,
    health,
    pool,
    close: () => {
      health.close();
      return db.destroy();
    },
  };
}

/**
 * A statement whose text starts with `/* prepared: NAME *\/` (always the
 * same text for that name) is prepared once per connection under NAME and
 * then only bound and executed: PostgreSQL parses and plans it once, not on
 * every call. For the hot statements whose text never changes (the append).
 * The embedded store ignores the comment.
 */
export const preparedComment = (name: string) => `/* prepared: ${name} */`;

function preparedName(text: string): string | undefined {
  if (!text.startsWith("/* prepared: ")) return undefined;
  const end = text.indexOf(" */", 13);
  return end > 13 ? text.slice(13, end) : undefined;
}

/**
 * A pooled client that goes back to the pool only if its connection still
 * works. A terminated backend's error reaches the query before the socket
 * closes, and pg-pool would otherwise hand the dying client to the next
 * caller, whose call then fails too.
 */
function discardingBroken(client: pg.PoolClient, observe: (err: unknown) => void): PostgresPoolClient {
  let broken = false;
  const query = (...args: unknown[]) => {
    const name = typeof args[0] === "string" ? preparedName(args[0]) : undefined;
    if (name !== undefined) args = [{ name, text: args[0], values: args[1] }];
    const result = (client.query as (...a: unknown[]) => unknown)(...args);
    if (!(result instanceof Promise)) return result;
    return result.catch((err: unknown) => {
      if (isConnectionLoss(err)) broken = true;
      observe(err);
      throw err;
    });
  };
  return { query: query as PostgresPoolClient["query"], release: (destroy?: boolean) => client.release(destroy === true || broken) };
}

/** A connection of its own: the pool may be full of calls waiting on the same database. */
async function probePostgres(url: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: "sessionstore-probe",
  });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } finally {
    await client.end().catch(() => {});
  }
}

async function openPGlite(options: OpenOptions): Promise<OpenDatabase> {
  let pglite = options.pglite;
  let description = "embedded (in memory)";
  let unlock = async () => {};
  if (!pglite) {
    const dir = options.dataDir ?? "./data";
    const dataDir = dir.startsWith("memory://") ? dir : resolve(dir);
    if (!dataDir.startsWith("memory://")) {
      mkdirSync(dataDir, { recursive: true });
      unlock = await lockDataDir(dataDir);
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
    await unlock();
    throw err;
  }
  const embedded = pglite;
  // In one process the database goes away only when closed or broken (a
  // trapped WebAssembly instance), and then for good: the probe then fails
  // until a restart, and health says so.
  const health = new DatabaseHealth(async () => {
    await embedded.query("SELECT 1");
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite, (err) => health.observe(err)), log: sqlLog() });
  return {
    db,
    backend: "pglite",
    description,
    health,
    close: async () => {
      health.close();
      await db.destroy();
      await unlock();
    },
  };
}

/** SQL spans while tracing is on; with no log, Kysely adds nothing around a query. */
function sqlLog(): typeof traceQuery | undefined {
  return tracingEnabled() ? traceQuery : undefined;
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
