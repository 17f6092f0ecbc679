import type { Migration } from "kysely";
import * as m0001 from "./0001_initial.js";
import * as m0002 from "./0002_event_positions.js";
import * as m0003 from "./0003_retention.js";
import * as m0004 from "./0004_append_function.js";
import * as m0005 from "./0005_initial_state.js";
import * as m0006 from "./0006_memory.js";
import * as m0007 from "./0007_checkpoints.js";
import * as m0008 from "./0008_forks.js";
import * as m0010 from "./0010_append_fast_path.js";
import * as m0011 from "./0011_memory_terms.js";

// Numbered and append-only: a released migration is never edited, a change
// is a new file. Names sort in the order they run.
export const migrations: Record<string, Migration> = {
  "0001_initial": m0001,
  "0002_event_positions": m0002,
  "0003_retention": m0003,
  "0004_append_function": m0004,
  "0005_initial_state": m0005,
  "0006_memory": m0006,
  "0007_checkpoints": m0007,
  "0008_forks": m0008,
  "0010_append_fast_path": m0010,
  "0011_memory_terms": m0011,
};
