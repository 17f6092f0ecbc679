import { X509Certificate } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { loadTokens } from "../../auth/tokens.js";
import { type Config, ConfigError, loadConfig, serverOptions } from "../../config/config.js";
import { loadPolicy } from "../../policy/app-policy.js";
import type { OpenDatabase } from "../../storage/database.js";
import { migrationState } from "../../storage/migrate.js";
import type { Command } from "../command.js";
import { openStore } from "../database.js";
import { renderHelp } from "../options.js";

type Verdict = "ok" | "note" | "problem";
interface Finding {
  verdict: Verdict;
  topic: string;
  text: string;
}

const MARK: Record<Verdict, string> = { ok: "ok     ", note: "note   ", problem: "PROBLEM" };
const TABLES = ["sessions", "events", "app_states", "user_states"];

export const doctor: Command = {
  name: "doctor",
  summary: "check configuration, database, migrations, permissions, tokens and TLS; say what is wrong",
  options: serverOptions,
  async run(argv, io) {
    if (argv.includes("--help") || argv.includes("-h")) {
      io.stdout.write(
        renderHelp(
          "usage: sessionstore doctor [serve options]",
          "Checks what `sessionstore serve` would run with (the same options and variables) and says in plain words what is wrong. Exit 1 when there is a problem.",
          serverOptions,
        ),
      );
      return 0;
    }
    const findings: Finding[] = [];
    const say = (verdict: Verdict, topic: string, text: string) => {
      findings.push({ verdict, topic, text });
      io.stdout.write(`${MARK[verdict]}  ${topic}: ${text}\n`);
    };
    let config: Config;
    try {
      config = loadConfig(io.env, argv);
    } catch (err) {
      // A flag the parser does not know is wrong usage; a value that does not parse is a finding.
      if (!(err instanceof ConfigError)) throw err;
      say("problem", "configuration", err.message);
      return 1;
    }
    say("ok", "configuration", `options parse; would listen on ${config.host}:${config.port}`);
    checkTokens(config, say);
    checkPolicy(config, say);
    checkTls(config, say);
    await checkDatabase(config, say);
    const problems = findings.filter((f) => f.verdict === "problem").length;
    io.stdout.write(problems === 0 ? "\nno problems found\n" : `\n${problems} problem${problems === 1 ? "" : "s"} found\n`);
    return problems === 0 ? 0 : 1;
  },
};

type Say = (verdict: Verdict, topic: string, text: string) => void;

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function checkTokens(config: Config, say: Say): void {
  try {
    const tokens = loadTokens(config.tokens, config.tokensFile);
    if (tokens.size > 0) say("ok", "tokens", `${tokens.size} token${tokens.size === 1 ? "" : "s"} configured; every call needs one`);
    else if (isLoopback(config.host)) say("note", "tokens", "none configured: every local caller may do anything (fine on loopback only)");
    else if (config.insecureNoAuth)
      say("note", "tokens", `none configured on ${config.host}, allowed by --insecure-no-auth: anyone who can connect may do anything`);
    else
      say(
        "problem",
        "tokens",
        `none configured, and the server refuses to listen on ${config.host} without them: set SESSIONSTORE_TOKENS_FILE (make entries with 'sessionstore token'), or SESSIONSTORE_INSECURE_NO_AUTH=true on a trusted network`,
      );
  } catch (err) {
    say("problem", "tokens", `the token configuration is wrong: ${(err as Error).message}`);
  }
}

function checkPolicy(config: Config, say: Say): void {
  if (!config.policy && !config.policyFile) return;
  try {
    const policies = loadPolicy(config.policy, config.policyFile);
    say("ok", "policy", `per-app policy reads; ${policies.overridden.length} app(s) with their own`);
  } catch (err) {
    say("problem", "policy", `the policy is wrong: ${(err as Error).message}`);
  }
}

function checkTls(config: Config, say: Say): void {
  if (!config.tlsCert && !config.tlsKey) {
    say(
      isLoopback(config.host) ? "ok" : "note",
      "TLS",
      "off: the port speaks plaintext (put a TLS proxy in front, or set --tls-cert and --tls-key)",
    );
    return;
  }
  if (!config.tlsCert || !config.tlsKey) {
    say(
      "problem",
      "TLS",
      `only ${config.tlsCert ? "the certificate" : "the key"} is set: TLS needs both SESSIONSTORE_TLS_CERT and SESSIONSTORE_TLS_KEY`,
    );
    return;
  }
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(config.tlsCert);
    key = readFileSync(config.tlsKey);
  } catch (err) {
    say("problem", "TLS", `cannot read ${(err as NodeJS.ErrnoException).path ?? "a TLS file"}: ${(err as Error).message}`);
    return;
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    say("problem", "TLS", `the certificate and key do not work together: ${(err as Error).message}`);
    return;
  }
  try {
    const x509 = new X509Certificate(cert);
    const left = Date.parse(x509.validTo) - Date.now();
    if (left <= 0) say("problem", "TLS", `the certificate expired on ${x509.validTo}`);
    else if (left < 30 * 86_400_000) say("note", "TLS", `the certificate expires soon, on ${x509.validTo}`);
    else say("ok", "TLS", `certificate for ${x509.subject.replace(/\n/g, ", ")} valid until ${x509.validTo}`);
  } catch (err) {
    say("problem", "TLS", `the certificate does not parse: ${(err as Error).message}`);
  }
}

/** Why a connection failed, in words an operator acts on. */
function connectionProblem(url: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException & { code?: string };
  const u = new URL(url);
  const where = `${u.hostname}:${u.port || "5432"}`;
  const db = decodeURIComponent(u.pathname.slice(1)) || "(default)";
  switch (e.code) {
    case "ECONNREFUSED":
      return `cannot reach the database: nothing accepts connections at ${where} (is PostgreSQL running there, and is DATABASE_URL right?)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot reach the database: the host ${u.hostname} is not known`;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
      return `cannot reach the database at ${where}: no answer (a firewall, or the wrong host)`;
    case "28P01":
    case "28000":
      return `the database refused user ${decodeURIComponent(u.username) || "(default)"}: ${e.message}`;
    case "3D000":
      return `the database ${db} does not exist at ${where} (create it, or fix DATABASE_URL)`;
    default:
      return `cannot connect to the database at ${where}: ${e.message || String(err)}`;
  }
}

async function checkDatabase(config: Config, say: Say): Promise<void> {
  if (config.databaseUrl) {
    const client = new pg.Client({
      connectionString: config.databaseUrl,
      connectionTimeoutMillis: 5000,
      application_name: "sessionstore-doctor",
    });
    client.on("error", () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      say("ok", "database", `PostgreSQL ${rows[0]?.v ?? "?"} answers at ${redact(config.databaseUrl)}`);
    } catch (err) {
      say("problem", "database", connectionProblem(config.databaseUrl, err));
      return;
    } finally {
      await client.end().catch(() => {});
    }
  } else if (!config.dataDir.startsWith("memory://")) {
    const dir = resolve(config.dataDir);
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory()) {
        say("problem", "database", `the embedded store's folder ${dir} is a file, not a folder`);
        return;
      }
      try {
        accessSync(dir, constants.R_OK | constants.W_OK);
      } catch {
        say("problem", "database", `this user may not read and write the embedded store's folder ${dir}`);
        return;
      }
    }
  }
  let store: OpenDatabase;
  try {
    store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  } catch (err) {
    const message = (err as Error).message;
    if (/in use|held by|locked/i.test(message)) say("note", "database", `${message}; stop that server to check the embedded store`);
    else say("problem", "database", `cannot open the store: ${message}`);
    return;
  }
  try {
    if (!config.databaseUrl) say("ok", "database", `${store.description} opens`);
    await checkMigrations(store, say);
    await checkPermissions(store, say);
  } finally {
    await store.close();
  }
}

async function checkMigrations(store: OpenDatabase, say: Say): Promise<void> {
  const state = await migrationState(store.db as Kysely<unknown>);
  if (state.unknown.length > 0) {
    say(
      "problem",
      "migrations",
      `the database has migrations this version does not know (${state.unknown.join(", ")}): a newer Sessionstore migrated it; run that version`,
    );
  }
  if (state.pending.length === 0) say("ok", "migrations", `all ${state.applied.length} applied`);
  else if (state.applied.length === 0)
    say(
      "problem",
      "migrations",
      "the database is empty (no migration applied): run 'sessionstore migrate apply', or start the server, which applies them",
    );
  else
    say(
      "problem",
      "migrations",
      `${state.pending.length} migration${state.pending.length === 1 ? " is" : "s are"} not applied yet (${state.pending.join(", ")}): run 'sessionstore migrate apply', or start the server, which applies them`,
    );
}

async function checkPermissions(store: OpenDatabase, say: Say): Promise<void> {
  const db = store.db as Kysely<unknown>;
  const user = (await sql<{ u: string }>`SELECT current_user AS u`.execute(db)).rows[0]?.u ?? "?";
  // A table made and written in a transaction that is rolled back: proves
  // what migrations and appends need, and leaves nothing behind.
  try {
    await db.transaction().execute(async (trx) => {
      await sql`CREATE TABLE sessionstore_doctor_probe (x int)`.execute(trx);
      await sql`INSERT INTO sessionstore_doctor_probe VALUES (1)`.execute(trx);
      throw new RolledBack();
    });
  } catch (err) {
    if (!(err instanceof RolledBack)) {
      say(
        "problem",
        "permissions",
        `the role ${user} may not create and write tables in this database (${(err as Error).message}): migrations need that`,
      );
      return;
    }
  }
  const missing: string[] = [];
  for (const table of TABLES) {
    const exists = (await sql<{ t: string | null }>`SELECT to_regclass(${table})::text AS t`.execute(db)).rows[0]?.t;
    if (!exists) continue;
    const { rows } = await sql<{ ok: boolean }>`SELECT has_table_privilege(${table}, 'SELECT, INSERT, UPDATE, DELETE') AS ok`.execute(db);
    if (!rows[0]?.ok) missing.push(table);
  }
  if (missing.length > 0)
    say("problem", "permissions", `the role ${user} may not read and write ${missing.join(", ")}: grant SELECT, INSERT, UPDATE, DELETE`);
  else say("ok", "permissions", `the role ${user} may create tables and read and write the store's`);
}

class RolledBack extends Error {}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}
