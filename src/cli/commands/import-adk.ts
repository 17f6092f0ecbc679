import { runImportAdk } from "../../importer/adk/index.js";
import type { Command } from "../command.js";

// The importer parses its own options (src/importer/adk/cli.ts) and answers
// the same exit codes as every command.
export const importAdk: Command = {
  name: "import-adk",
  summary: "copy an ADK DatabaseSessionService database (PostgreSQL, SQLite) into a running server",
  run: (argv, io) => runImportAdk(argv, io.env),
};
