import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import pg from "pg";

// A PostgreSQL cluster of a test's own, made with the installed server
// binaries in a temporary folder on a free port: a fault test restarts and
// kills it without touching the shared test database. initdb refuses to run
// as root, so as root the cluster belongs to the `postgres` user (or
// `nobody`) and its commands run as that user.

/** The folder of the installed server binaries (initdb, pg_ctl), newest version first; undefined when none is installed. */
export function findPgBinDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env.SESSIONSTORE_PG_BINDIR) candidates.push(process.env.SESSIONSTORE_PG_BINDIR);
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, "bin")));
  }
  candidates.push(...(process.env.PATH ?? "").split(delimiter).filter(Boolean));
  return candidates.find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")));
}

export interface PgCluster {
  /** Connection URL of the cluster's `postgres` database, as a superuser. */
  url: string;
  port: number;
  start(): Promise<void>;
  stop(mode: "fast" | "immediate"): Promise<void>;
  /** Terminates every client backend but the caller's; resolves with how many. */
  terminateBackends(): Promise<number>;
  /** Stops the cluster (if running) and removes its folder. */
  destroy(): Promise<void>;
  /** The server's log so far (for failure messages). */
  log(): string;
}

const USER = "sessionstore";

/** `settings`: extra server settings (`-c name=value`). */
export async function createCluster(binDir: string, settings: Record<string, string> = {}): Promise<PgCluster> {
  const owner = clusterOwner();
  // As root, in /tmp: the cluster's user may not reach a TMPDIR under root's home.
  const root = mkdtempSync(join(owner ? "/tmp" : tmpdir(), "sessionstore-pgcluster-"));
  if (owner) chownSync(root, owner.uid, owner.gid);
  const data = join(root, "data");
  const logFile = join(root, "server.log");
  const port = await freePort();
  const run = (command: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      execFile(
        join(binDir, command),
        args,
        { cwd: root, env: { PATH: process.env.PATH ?? "", LC_ALL: "C", LANG: "C" }, ...(owner ?? {}), timeout: 60_000 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`${command} ${args.join(" ")} failed: ${err.message}\n${stdout}\n${stderr}`));
          else resolve();
        },
      );
    });
  await run("initdb", ["-D", data, "-U", USER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  // fsync off: the cluster is thrown away, and an immediate stop is a crash
  // of the server processes, not of the OS, so nothing committed is lost.
  const extra = Object.entries(settings)
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join("");
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100${extra}`;
  let running = false;
  const cluster: PgCluster = {
    url: `postgres://${USER}@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await run("pg_ctl", ["-D", data, "-l", logFile, "-o", options, "-w", "-t", "60", "start"]);
      running = true;
    },
    async stop(mode) {
      await run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"]);
      running = false;
    },
    async terminateBackends() {
      const client = new pg.Client({ connectionString: cluster.url });
      client.on("error", () => {});
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        );
        return rows[0]?.n ?? 0;
      } finally {
        await client.end();
      }
    },
    async destroy() {
      if (running) await cluster.stop("immediate").catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
  };
  return cluster;
}

/** Who runs the cluster: undefined for the current user, unless that is root. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync("/etc/passwd", "utf8").split("\n");
  for (const name of ["postgres", "nobody"]) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(":");
    if (fields) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error("running as root, and neither a postgres nor a nobody user exists to own a test cluster");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
