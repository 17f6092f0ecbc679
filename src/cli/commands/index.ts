import type { Command } from "../command.js";
import { doctor } from "./doctor.js";
import { events } from "./events.js";
import { exportCommand } from "./export.js";
import { importCommand } from "./import.js";
import { importAdk } from "./import-adk.js";
import { migrate } from "./migrate.js";
import { serve } from "./serve.js";
import { sessions } from "./sessions.js";
import { tail } from "./tail.js";
import { token } from "./token.js";
import { users } from "./users.js";

// `sessionstore <name>`: one file per command in this folder, one line here.
// A new command exports a Command (see ../command.ts) and is added below, in
// the order `sessionstore --help` lists them.
export const commands: Command[] = [serve, migrate, doctor, sessions, events, users, tail, exportCommand, importCommand, importAdk, token];
