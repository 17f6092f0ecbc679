import type { Migration } from "kysely";
import * as m0001 from "./0001_initial.js";

// Numbered and append-only: a released migration is never edited, a change
// is a new file. Names sort in the order they run.
export const migrations: Record<string, Migration> = {
  "0001_initial": m0001,
};
