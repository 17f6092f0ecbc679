import { serverOptions } from "../config/config.js";
import { clientOptions } from "./client.js";
import { markdownTable, type OptionSet } from "./options.js";

// The README's option tables, each between `<!-- options:NAME -->` and
// `<!-- /options:NAME -->`, generated from the option definitions by
// `npm run readme:options`; test/cli/readme-options.test.ts fails when one is stale.
export const readmeTables: Record<string, OptionSet> = {
  serve: serverOptions,
  client: clientOptions,
};

/** The README with every marked table regenerated; throws when a marker is missing. */
export function withFreshTables(readme: string): string {
  let out = readme;
  for (const [name, options] of Object.entries(readmeTables)) {
    const open = `<!-- options:${name} -->`;
    const close = `<!-- /options:${name} -->`;
    const start = out.indexOf(open);
    const end = out.indexOf(close);
    if (start < 0 || end < start) throw new Error(`README.md has no ${open} ... ${close} section`);
    out = `${out.slice(0, start + open.length)}\n${markdownTable(options)}\n${out.slice(end)}`;
  }
  return out;
}
