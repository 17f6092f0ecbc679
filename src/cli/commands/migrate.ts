import type { Kysely } from "kysely";
import { databaseOptions } from "../../config/config.js";
import { migrateToLatest, migrationState } from "../../storage/migrate.js";
import { type Command, withSubcommands } from "../command.js";
import { openStore } from "../database.js";
import { parseOptions } from "../options.js";
import { helpOut } from "./sessions.js";

const status: Command = {
  name: "status",
  summary: "list the migrations: applied (when) and pending; exit 1 when some are pending",
  options: databaseOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(databaseOptions, argv, io.env);
    if (help) return helpOut(io, "migrate status [--database-url URL | --data-dir DIR]", this, databaseOptions);
    const store = await openStore(values);
    try {
      const state = await migrationState(store.db as Kysely<unknown>);
      io.stdout.write(`database: ${store.description}\n`);
      for (const m of state.applied) io.stdout.write(`  applied  ${m.name}  ${m.at.toISOString()}\n`);
      for (const name of state.pending) io.stdout.write(`  pending  ${name}\n`);
      for (const name of state.unknown) io.stdout.write(`  unknown  ${name}  (applied by a newer Sessionstore)\n`);
      if (state.pending.length > 0) {
        io.stdout.write(`${state.pending.length} pending: run 'sessionstore migrate apply' (serve also applies them when it starts)\n`);
        return 1;
      }
      io.stdout.write("up to date\n");
      return 0;
    } finally {
      await store.close();
    }
  },
};

const apply: Command = {
  name: "apply",
  summary: "apply the pending migrations (under a lock: safe beside running replicas)",
  options: databaseOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(databaseOptions, argv, io.env);
    if (help) return helpOut(io, "migrate apply [--database-url URL | --data-dir DIR]", this, databaseOptions);
    const store = await openStore(values);
    try {
      const applied = await migrateToLatest(store.db as Kysely<unknown>);
      for (const name of applied) io.stdout.write(`applied ${name}\n`);
      io.stdout.write(applied.length ? `${applied.length} applied; up to date\n` : "nothing to apply; up to date\n");
      return 0;
    } finally {
      await store.close();
    }
  },
};

export const migrate = withSubcommands("migrate", "show or apply database migrations (status, apply)", [status, apply]);
