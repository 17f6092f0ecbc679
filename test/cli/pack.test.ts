import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
// Packing needs npm; without it there is nothing to test.
const npm = spawnSync("npm", ["--version"], { encoding: "utf8" }).status === 0;

describe.skipIf(!npm)("the packed package", () => {
  const dir = mkdtempSync(join(tmpdir(), "sessionstore-pack-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs `npx sessionstore` from its tarball: help, a token, the migrations", { timeout: 600_000 }, () => {
    // prepack builds dist/, which is what the tarball runs (it has no src/).
    execFileSync("npm", ["pack", "--pack-destination", dir, "--silent"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 300_000,
    });
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    expect(tarball).toBe("sessionstore-0.1.0.tgz");
    // Both ways npx runs a package's bin: the package as the command (which hands
    // the bin the word "sessionstore" first), and --package with the bin's name.
    const npx = (...args: string[]) =>
      spawnSync("npx", ["--yes", `./${tarball}`, "sessionstore", ...args], {
        cwd: dir,
        encoding: "utf8",
        // spawnSync blocks the worker, so the test's own timeout cannot end a hung npx.
        timeout: 240_000,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          npm_config_update_notifier: "false",
          npm_config_fund: "false",
          npm_config_audit: "false",
        },
      });
    const help = npx("--help");
    expect(help.stderr).toBe("");
    expect(help.status).toBe(0);
    for (const name of ["serve", "migrate", "doctor", "sessions", "events", "users", "tail", "export", "import", "import-adk", "token"]) {
      expect(help.stdout).toContain(`  ${name} `);
    }
    const token = spawnSync("npx", ["--yes", "--package", `./${tarball}`, "sessionstore", "token", "--apps", "support"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 240_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_update_notifier: "false" },
    });
    expect(token.status).toBe(0);
    expect(token.stdout).toMatch(/"apps":\["support"\]/);
    // The compiled migrations run: an in-memory store has them all pending.
    const status = npx("migrate", "status", "--data-dir", "memory://");
    expect(status.stdout).toMatch(/pending {2}0001_initial/);
    expect(status.status).toBe(1);
    expect(npx("frobnicate").status).toBe(2);
  });
});
