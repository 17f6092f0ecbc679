import type { Command } from "../command.js";
import { serve } from "./serve.js";
import { token } from "./token.js";

// `sessionstore <name>`: one file per command in this folder, one line here.
// A new command exports a Command (see ../command.ts) and is added below, in
// the order `sessionstore --help` lists them.
export const commands: Command[] = [serve, token];
