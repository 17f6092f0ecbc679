// Regenerates the option tables in README.md from the option definitions
// (src/cli/readme-tables.ts). `npm run readme:options`.
import { readFileSync, writeFileSync } from "node:fs";
import { withFreshTables } from "../src/cli/readme-tables.js";

const path = new URL("../README.md", import.meta.url);
const before = readFileSync(path, "utf8");
const after = withFreshTables(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(after === before ? "README.md tables are up to date\n" : "README.md tables regenerated\n");
