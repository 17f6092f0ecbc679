import type { Command } from "../command.js";

export interface CommandEntry {
  name: string;
  /** One line for `sessionstore --help`. */
  summary: string;
  /** Loaded only when run: `serve` starts without the importers' and the doctor's modules. */
  load(): Promise<Command>;
}

// `sessionstore <name>`: one file per command in this folder, one entry here,
// in the order `sessionstore --help` lists them.
export const commands: CommandEntry[] = [
  {
    name: "serve",
    summary: "run the server (gRPC, gRPC-Web, Connect and the web console on one port)",
    load: async () => (await import("./serve.js")).serve,
  },
  {
    name: "migrate",
    summary: "show or apply database migrations (status, apply)",
    load: async () => (await import("./migrate.js")).migrate,
  },
  {
    name: "doctor",
    summary: "check configuration, database, migrations, permissions, tokens and TLS; say what is wrong",
    load: async () => (await import("./doctor.js")).doctor,
  },
  { name: "sessions", summary: "list, show and delete sessions (ls, get, rm)", load: async () => (await import("./sessions.js")).sessions },
  { name: "events", summary: "list a session's events (ls)", load: async () => (await import("./events.js")).events },
  { name: "users", summary: "erase a user's data (erase)", load: async () => (await import("./users.js")).users },
  {
    name: "tail",
    summary: "follow the events of a session, a user or an app as they are stored",
    load: async () => (await import("./tail.js")).tail,
  },
  {
    name: "export",
    summary: "write the store (sessions with every event, app and user state) as JSON Lines",
    load: async () => (await import("./export.js")).exportCommand,
  },
  {
    name: "import",
    summary: "load an export into the store; what exists is skipped, so a repeat resumes",
    load: async () => (await import("./import.js")).importCommand,
  },
  {
    name: "import-adk",
    summary: "copy an ADK DatabaseSessionService database (PostgreSQL, SQLite) into a running server",
    load: async () => (await import("./import-adk.js")).importAdk,
  },
  { name: "token", summary: "make a bearer token and its entry for the tokens file", load: async () => (await import("./token.js")).token },
];
