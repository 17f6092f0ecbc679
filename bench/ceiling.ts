// The ceiling: the minimal SQL an append needs (bump the session row, insert
// the event row), one statement and so one round trip and one transaction,
// on the server's own schema (same tables, same indexes), with the same
// number of concurrent writers. Two drivers: pgbench (C, the lowest client
// overhead there is) and node-postgres (the driver the server uses).

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { closedLoop } from "./load.js";
import { withClient } from "./postgres.js";
import type { AppendRun } from "./sessionstore.js";
import { round, summarize } from "./stats.js";

/** $1 = session pk, $2 = the event body. */
export const CEILING_SQL = `WITH s AS (
  UPDATE sessions
     SET revision = revision + 1,
         update_time_ns = (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint,
         state = state || jsonb_build_object('turn', revision + 1)
   WHERE pk = $1
  RETURNING pk, revision, update_time_ns, app_name, user_id
)
INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
SELECT pk, revision, 'c-' || revision, update_time_ns, $2, app_name, user_id FROM s`;

/** The sessions a ceiling run writes to; their primary keys are consecutive. */
async function createSessions(databaseUrl: string, tag: string, count: number): Promise<bigint> {
  return withClient(databaseUrl, async (db) => {
    const { rows } = await db.query<{ pk: bigint }>(
      `INSERT INTO sessions (app_name, user_id, id, state, create_time_ns, update_time_ns)
       SELECT 'ceiling', 'u' || g, $1 || '-' || g, '{}', 0, 0 FROM generate_series(0, $2::int - 1) g
       RETURNING pk`,
      [tag, count],
    );
    const pks = rows.map((r) => r.pk).sort((a, b) => (a < b ? -1 : 1));
    const first = pks[0];
    if (first === undefined || pks[pks.length - 1] !== first + BigInt(count - 1)) throw new Error("ceiling sessions not consecutive");
    return first;
  });
}

/** node-postgres, one connection per writer. */
export async function nodePgCeiling(
  databaseUrl: string,
  tag: string,
  writers: number,
  hot: boolean,
  body: Uint8Array,
  warmupSeconds: number,
  seconds: number,
): Promise<AppendRun> {
  const base = await createSessions(databaseUrl, tag, hot ? 1 : writers);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: writers });
  pool.on("error", () => {});
  const bytes = Buffer.from(body);
  try {
    const op = async (w: number) => {
      await pool.query({ name: "ceiling-append", text: CEILING_SQL, values: [(hot ? base : base + BigInt(w)).toString(), bytes] });
    };
    if (warmupSeconds > 0) await closedLoop(writers, warmupSeconds, op);
    const result = await closedLoop(writers, seconds, op);
    return { ...result, writers, hot };
  } finally {
    await pool.end();
  }
}

/** pgbench with the same statement as a custom script, `-c writers`. */
export async function pgbenchCeiling(
  pgbench: string,
  databaseUrl: string,
  tag: string,
  writers: number,
  hot: boolean,
  body: Uint8Array,
  warmupSeconds: number,
  seconds: number,
): Promise<AppendRun> {
  const base = await createSessions(databaseUrl, tag, hot ? 1 : writers);
  const dir = mkdtempSync(join(tmpdir(), "ssbench-pgbench-"));
  try {
    const script = join(dir, "append.sql");
    const hex = Buffer.from(body).toString("hex");
    writeFileSync(
      script,
      `${hot ? "\\set sid :base" : "\\set sid :base + :client_id"}\n${CEILING_SQL.replace("$1", ":sid").replace("$2", `'\\x${hex}'::bytea`)};\n`,
    );
    const url = new URL(databaseUrl);
    const env = {
      ...process.env,
      PGHOST: url.hostname,
      PGPORT: url.port || "5432",
      PGUSER: decodeURIComponent(url.username),
      PGPASSWORD: decodeURIComponent(url.password),
      PGDATABASE: url.pathname.slice(1),
    };
    const args = ["-n", "-M", "prepared", "-c", String(writers), "-j", String(Math.min(writers, 2)), "-f", script, "-D", `base=${base}`];
    if (warmupSeconds > 0) await run(pgbench, [...args, "-T", String(Math.max(1, Math.round(warmupSeconds)))], env);
    const out = await run(pgbench, [...args, "-T", String(Math.max(1, Math.round(seconds))), "-l", "--log-prefix", join(dir, "log")], env);
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1]);
    const processed = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1]);
    const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
    // Per-transaction log lines: client_id transaction_no time_us script_no epoch epoch_us
    const latencies: number[] = [];
    for (const file of readdirSync(dir).filter((f) => f.startsWith("log"))) {
      for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
        const fields = line.split(" ");
        if (fields.length >= 3) latencies.push(Number(fields[2]) / 1000);
      }
    }
    return {
      ops: processed,
      errors: failed,
      seconds: round(seconds),
      throughput: round(tps, 1),
      latency: summarize(latencies),
      writers,
      hot,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench exited with ${code}: ${out.slice(-2000)}`))));
  });
}
