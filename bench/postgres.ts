import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { openDatabase } from "../src/storage/database.js";

/** The role scripts/postgres-up.sh creates; override with SESSIONSTORE_BENCH_DATABASE_URL. */
export const DEFAULT_ADMIN_URL = "postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres";

const INT8_OID = 20;

export function withDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A client whose int8 columns come back as bigint, like the server's. */
export function bigintTypes(): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      oid === INT8_OID ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, types: bigintTypes(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function isReachable(adminUrl: string): Promise<boolean> {
  try {
    await withClient(adminUrl, (c) => c.query("SELECT 1"));
    return true;
  } catch {
    return false;
  }
}

/** Starts the local PostgreSQL with the project's script when the default URL is not answering. */
export async function ensurePostgres(adminUrl: string, root: string, log: (msg: string) => void): Promise<void> {
  if (await isReachable(adminUrl)) return;
  if (process.env.SESSIONSTORE_BENCH_DATABASE_URL) throw new Error(`PostgreSQL at ${adminUrl} is not reachable`);
  log("PostgreSQL is not answering; running scripts/postgres-up.sh");
  execFileSync(join(root, "scripts/postgres-up.sh"), { stdio: ["ignore", "ignore", "inherit"] });
  if (!(await isReachable(adminUrl))) throw new Error(`PostgreSQL at ${adminUrl} is still not reachable`);
}

/**
 * The databases of one bench run, each created fresh under a random prefix
 * and dropped by `dropAll` (also after a failure or Ctrl-C).
 */
export class BenchDatabases {
  readonly prefix = `ssbench_${randomBytes(4).toString("hex")}`;
  readonly #adminUrl: string;
  readonly #created: string[] = [];

  constructor(adminUrl: string) {
    this.#adminUrl = adminUrl;
  }

  async create(suffix: string, options: { migrate: boolean }): Promise<string> {
    const name = `${this.prefix}_${suffix}`;
    await withClient(this.#adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
    this.#created.push(name);
    const url = withDatabase(this.#adminUrl, name);
    if (options.migrate) {
      // The server's own migrations, so peers that use its schema get the same tables and indexes.
      const opened = await openDatabase({ databaseUrl: url, poolSize: 1 });
      await opened.close();
    }
    return url;
  }

  async dropAll(): Promise<void> {
    const names = this.#created.splice(0);
    if (names.length === 0) return;
    await withClient(this.#adminUrl, async (c) => {
      for (const name of names) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  }
}

export async function serverInfo(adminUrl: string): Promise<Record<string, string>> {
  return withClient(adminUrl, async (c) => {
    const out: Record<string, string> = {};
    const { rows } = await c.query<{ version: string }>("SELECT version()");
    out.version = rows[0]?.version ?? "";
    for (const setting of ["max_connections", "shared_buffers", "synchronous_commit", "fsync", "wal_level"]) {
      const r = await c.query<Record<string, string>>(`SHOW ${setting}`);
      out[setting] = Object.values(r.rows[0] ?? {})[0] ?? "";
    }
    return out;
  });
}

/** pgbench from PATH or the newest /usr/lib/postgresql/N/bin. */
export function findPgbench(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "pgbench"))) return join(dir, "pgbench");
  }
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const path = join(base, v, "bin", "pgbench");
    if (existsSync(path)) return path;
  }
  return undefined;
}
