// Read access to an ADK DatabaseSessionService database, PostgreSQL or SQLite,
// in either of ADK's schemas. Rows come back in ADK's own orders: sessions by
// key, a session's events by (timestamp, id), which is how ADK's get_session
// orders them.

import { readFile } from "node:fs/promises";
import pg from "pg";
import initSqlJs from "sql.js";

export type Row = Record<string, unknown>;

/** "0": events keep actions as a pickled EventActions; "1": events keep JSON event_data. */
export type AdkSchema = "0" | "1";

export interface SqlReader {
  readonly dialect: "postgres" | "sqlite";
  /** `?` placeholders. */
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

/** `postgresql://…` (also `postgres://`, `postgresql+asyncpg://`), `sqlite:///path` (also `sqlite+aiosqlite:`) or a file path. */
export async function openReader(url: string): Promise<SqlReader> {
  const scheme = /^([a-z0-9]+)(\+[a-z0-9]+)?:\/\//i.exec(url);
  if (scheme && /^postgres(ql)?$/i.test(scheme[1] as string)) {
    return openPostgres(`postgresql://${url.slice(scheme[0].length)}`);
  }
  if (scheme && (scheme[1] as string).toLowerCase() === "sqlite") {
    // sqlite:///relative/or/absolute as SQLAlchemy reads it: three slashes, then the path.
    const path = url.slice(scheme[0].length).replace(/^\//, "").replace(/\?.*$/, "");
    return openSqlite(path);
  }
  if (scheme) throw new Error(`unsupported database URL scheme "${scheme[1]}": use postgresql://, sqlite:/// or a file path`);
  return openSqlite(url);
}

async function openPostgres(url: string): Promise<SqlReader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Read one consistent snapshot: a live ADK writing meanwhile shows nothing half-done.
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  // One connection (one snapshot) for every reader: queries take turns.
  let turn: Promise<unknown> = Promise.resolve();
  return {
    dialect: "postgres",
    all(sql, params = []) {
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      const result = turn.then(async () => (await client.query(text, params)).rows as Row[]);
      turn = result.catch(() => {});
      return result;
    },
    async close() {
      await client.query("COMMIT").catch(() => {});
      await client.end();
    },
  };
}

async function openSqlite(path: string): Promise<SqlReader> {
  if (path === "" || path === ":memory:") throw new Error("an in-memory SQLite database has nothing to import");
  const SQL = await initSqlJs();
  // sql.js holds the whole file in memory: fine for the SQLite files ADK
  // deployments keep; a large one belongs on PostgreSQL anyway.
  const db = new SQL.Database(await readFile(path));
  return {
    dialect: "sqlite",
    async all(sql, params = []) {
      const stmt = db.prepare(sql);
      try {
        stmt.bind(params as initSqlJs.BindParams);
        const rows: Row[] = [];
        while (stmt.step()) rows.push(stmt.getAsObject() as Row);
        return rows;
      } finally {
        stmt.free();
      }
    },
    async close() {
      db.close();
    },
  };
}

export async function tableExists(r: SqlReader, table: string): Promise<boolean> {
  const rows =
    r.dialect === "sqlite"
      ? await r.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table])
      : await r.all("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?", [table]);
  return rows.length > 0;
}

export async function columnsOf(r: SqlReader, table: string): Promise<Set<string>> {
  const rows =
    r.dialect === "sqlite"
      ? await r.all(`SELECT name FROM pragma_table_info(?)`, [table])
      : await r.all("SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?", [
          table,
        ]);
  return new Set(rows.map((row) => String(row.name)));
}

/** The schema ADK itself would detect (google/adk/sessions/migration/_schema_check_utils.py). */
export async function detectSchema(r: SqlReader): Promise<AdkSchema> {
  if (await tableExists(r, "adk_internal_metadata")) {
    const rows = await r.all(`SELECT value FROM adk_internal_metadata WHERE "key" = ?`, ["schema_version"]);
    const version = rows[0]?.value;
    if (version === "1" || version === "0") return version;
    throw new Error(`adk_internal_metadata names schema version ${JSON.stringify(version)}, which this importer does not know`);
  }
  if (!(await tableExists(r, "sessions")) || !(await tableExists(r, "events"))) {
    throw new Error("no ADK sessions/events tables in this database");
  }
  const cols = await columnsOf(r, "events");
  if (cols.has("actions") && !cols.has("event_data")) return "0";
  if (cols.has("event_data")) return "1";
  throw new Error("the events table has neither `actions` nor `event_data`: not an ADK DatabaseSessionService database");
}

/**
 * A timestamp column, selected so that `microsOf` reads it as integer
 * microseconds since the epoch. ADK stores naive UTC datetimes (SQLAlchemy's
 * text form on SQLite); a `timestamptz` column on PostgreSQL reads the same.
 */
export function microsSql(r: SqlReader, column: string): string {
  return r.dialect === "postgres" ? `(extract(epoch from ${column}) * 1000000)::bigint::text` : column;
}

const SQLITE_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

export function microsOf(value: unknown): bigint {
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
  if (typeof value === "number") return BigInt(Math.round(value * 1e6));
  const m = typeof value === "string" ? SQLITE_TIME.exec(value) : null;
  if (!m) throw new Error(`unreadable timestamp ${JSON.stringify(value)}`);
  const [, y, mo, d, h, mi, sec] = m.map(Number) as number[];
  const whole = Date.UTC(y as number, (mo as number) - 1, d as number, h as number, mi as number, sec as number);
  const micros = m[7] ? Number(m[7].padEnd(6, "0")) : 0;
  return BigInt(whole) * 1000n + BigInt(micros);
}
