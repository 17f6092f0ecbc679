import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readmeTables, withFreshTables } from "../../src/cli/readme-tables.js";

describe("README option tables", () => {
  it("match the option definitions (run `npm run readme:options` after changing an option)", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(withFreshTables(readme)).toBe(readme);
  });

  it("list every option with its variable and flag", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const options of Object.values(readmeTables)) {
      for (const option of Object.values(options)) {
        expect(readme).toContain(`--${option.flag}`);
        if (option.env) expect(readme).toContain(`\`${option.env}\``);
      }
    }
  });
});
