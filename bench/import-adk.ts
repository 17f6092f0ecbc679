// `npx tsx bench/import-adk.ts`: the import rate of `import-adk` (events per
// second) from an ADK v1-schema database on PostgreSQL into a server on
// PostgreSQL, both on the local cluster. The ADK tables are ADK's v1 DDL,
// filled by SQL with events of a typical shape (a text part and a state delta).
//
//   --sessions N    sessions (default 200)
//   --events M      events per session (default 50)
//   --concurrency C sessions imported at once (default 8)
//   --write         put the figures in bench/IMPORT.md, which BENCHMARKS.md includes
// SESSIONSTORE_BENCH_DATABASE_URL points at another PostgreSQL.

import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createSessionStoreClient } from "../src/client/create-client.js";
import { AdkDatabase } from "../src/importer/adk/adk-database.js";
import { importAdk } from "../src/importer/adk/import.js";
import { BenchDatabases, DEFAULT_ADMIN_URL, ensurePostgres, withClient } from "./postgres.js";
import { startServer } from "./server.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "200" },
    events: { type: "string", default: "50" },
    concurrency: { type: "string", default: "8" },
    write: { type: "boolean", default: false },
  },
});
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(", ");
const sessions = Number(values.sessions);
const perSession = Number(values.events);
const adminUrl = process.env.SESSIONSTORE_BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL;
const log = (msg: string) => process.stderr.write(`[import-adk bench] ${msg}\n`);

const ADK_V1_DDL = `
  CREATE TABLE adk_internal_metadata ("key" varchar(128) PRIMARY KEY, value varchar(256));
  INSERT INTO adk_internal_metadata VALUES ('schema_version', '1');
  CREATE TABLE sessions (app_name varchar(128), user_id varchar(128), id varchar(128), state jsonb,
    create_time timestamp, update_time timestamp, PRIMARY KEY (app_name, user_id, id));
  CREATE TABLE events (id varchar(128), app_name varchar(128), user_id varchar(128), session_id varchar(128),
    invocation_id varchar(256), "timestamp" timestamp, event_data jsonb, PRIMARY KEY (id, app_name, user_id, session_id),
    FOREIGN KEY (app_name, user_id, session_id) REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE);
  CREATE INDEX idx_events_app_user_session_ts_id ON events (app_name, user_id, session_id, "timestamp" DESC, id DESC);
  CREATE TABLE app_states (app_name varchar(128) PRIMARY KEY, state jsonb, update_time timestamp);
  CREATE TABLE user_states (app_name varchar(128), user_id varchar(128), state jsonb, update_time timestamp,
    PRIMARY KEY (app_name, user_id));`;

const FILL = `
  INSERT INTO sessions SELECT 'bench', 'u' || (s % 20), 's' || s, jsonb_build_object('topic', 't' || s),
    to_timestamp(1764547200 + s * 60) AT TIME ZONE 'UTC', to_timestamp(1764547200 + s * 60 + $2) AT TIME ZONE 'UTC'
    FROM generate_series(1, $1::int) s;
  INSERT INTO events SELECT 'e' || s || '-' || n, 'bench', 'u' || (s % 20), 's' || s, 'inv-' || s || '-' || (n / 4),
    to_timestamp(1764547200 + s * 60 + n) AT TIME ZONE 'UTC',
    jsonb_build_object(
      'id', 'e' || s || '-' || n, 'invocation_id', 'inv-' || s || '-' || (n / 4),
      'author', CASE WHEN n % 2 = 0 THEN 'user' ELSE 'assistant' END,
      'timestamp', 1764547200 + s * 60 + n + 0.123456,
      'content', jsonb_build_object('role', CASE WHEN n % 2 = 0 THEN 'user' ELSE 'model' END,
        'parts', jsonb_build_array(jsonb_build_object('text', repeat('Where is my order? ', 10)))),
      'actions', jsonb_build_object('state_delta', jsonb_build_object('turn', n, 'user:seen', n), 'artifact_delta', '{}'::jsonb,
        'requested_auth_configs', '{}'::jsonb, 'requested_tool_confirmations', '{}'::jsonb),
      'node_info', jsonb_build_object('path', ''))
    FROM generate_series(1, $1::int) s, generate_series(1, $2::int) n;
  INSERT INTO app_states VALUES ('bench', '{"plan": "pro"}', now());
  INSERT INTO user_states SELECT 'bench', 'u' || u, jsonb_build_object('seen', 1), now() FROM generate_series(0, 19) u;`;

await ensurePostgres(adminUrl, root, log);
const dbs = new BenchDatabases(adminUrl);
try {
  const source = await dbs.create("adk", { migrate: false });
  const target = await dbs.create("store", { migrate: true });
  await withClient(source, async (c) => {
    await c.query(ADK_V1_DDL);
    for (const statement of FILL.split(";").filter((s) => s.trim())) {
      await c.query(statement, statement.includes("$2") ? [sessions, perSession] : statement.includes("$1") ? [sessions] : []);
    }
  });
  log(`ADK v1 database: ${sessions} sessions x ${perSession} events`);
  const server = await startServer({ root, databaseUrl: target });
  const db = await AdkDatabase.open(source);
  try {
    const client = createSessionStoreClient(server.url);
    const summary = await importAdk(db, client, { concurrency: Number(values.concurrency) });
    const rate = Math.round(summary.events / summary.seconds);
    log(`imported ${summary.events} events of ${summary.sessions} sessions in ${summary.seconds.toFixed(1)} s: ${rate} events/s`);
    const again = await importAdk(db, client, { concurrency: Number(values.concurrency) });
    log(`re-run (nothing to write): ${Math.round(again.events / again.seconds)} events/s checked`);
    const rerun = Math.round(again.events / again.seconds);
    process.stdout.write(
      `${JSON.stringify({ sessions, eventsPerSession: perSession, eventsPerSecond: rate, rerunEventsPerSecond: rerun })}\n`,
    );
    if (values.write) {
      writeFileSync(
        join(root, "bench", "IMPORT.md"),
        importSection({
          sessions,
          perSession,
          concurrency: Number(values.concurrency),
          events: summary.events,
          seconds: summary.seconds,
          rate,
          rerun,
          commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim(),
          load: loadBefore,
        }),
      );
      log("wrote bench/IMPORT.md (BENCHMARKS.md includes it)");
    }
  } finally {
    await db.close();
    await server.stop();
  }
} finally {
  await dbs.dropAll();
}

function importSection(r: {
  sessions: number;
  perSession: number;
  concurrency: number;
  events: number;
  seconds: number;
  rate: number;
  rerun: number;
  commit: string;
  load: string;
}): string {
  const n = (v: number) => v.toLocaleString("en-US");
  return `## 8. Import from ADK (\`sessionstore import-adk\`)

\`npx tsx bench/import-adk.ts --write\` at commit \`${r.commit}\` (load average ${r.load} at the start): an ADK database in ADK's v1 schema on PostgreSQL (ADK's DDL, filled by SQL: ${n(r.sessions)} sessions of ${n(r.perSession)} events, each a text part of about 190 characters and a two-key state delta, one of them \`user:\`), imported through the gRPC API into a server on PostgreSQL on the same cluster, ${r.concurrency} sessions at a time.

| | events | seconds | events/s |
| --- | --- | --- | --- |
| first import | ${n(r.events)} | ${r.seconds.toFixed(1)} | **${n(r.rate)}** |
| the same import again (every session already there: checked, nothing written) | ${n(r.events)} | – | ${n(r.rerun)} |

Every event is one \`AppendEvent\` with ADK's own event id (the same validation and redaction as any append; the id makes a re-run or a resumed run write nothing twice), events of one session in order, ${r.concurrency} sessions in parallel; a re-run or a resumed run reads each session's newest stored event and skips the events up to it.
`;
}
