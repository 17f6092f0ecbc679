import type { databaseOptions } from "../config/config.js";
import { type OpenDatabase, openDatabase } from "../storage/database.js";
import type { Values } from "./options.js";

/** Opens the store the server would use, without migrating it. */
export function openStore(values: Values<typeof databaseOptions>): Promise<OpenDatabase> {
  return openDatabase({ databaseUrl: values.databaseUrl, dataDir: values.dataDir, poolSize: Math.min(values.poolSize, 4), migrate: false });
}
