import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

// Debian's chromium package, driven by playwright-core (Playwright's own
// browser download is not used). CI sets SESSIONSTORE_REQUIRE_BROWSER=1, so
// a missing browser fails the run instead of skipping the console's tests.
export const CHROMIUM = process.env.SESSIONSTORE_CHROMIUM ?? "/usr/bin/chromium";
const required = process.env.SESSIONSTORE_REQUIRE_BROWSER === "1";

export const browserAvailable = existsSync(CHROMIUM);
if (!browserAvailable) {
  if (required) throw new Error(`SESSIONSTORE_REQUIRE_BROWSER=1 but ${CHROMIUM} does not exist: run scripts/chromium-up.sh`);
  process.stderr.write(`\n!! Browser tests SKIPPED: no ${CHROMIUM}. Run scripts/chromium-up.sh or set SESSIONSTORE_CHROMIUM.\n\n`);
}

export function launchBrowser(): Promise<Browser> {
  // The sandbox needs user namespaces, which containers (and root) often lack.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

export const DESKTOP = { width: 1360, height: 860 };
export const NARROW = { width: 390, height: 844 };

/** Where the tests save their screenshots (the best are copied to docs/ by hand). */
export const SCREENSHOT_DIR = join(process.cwd(), "test-results", "screenshots");

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
}

/** Collects what would mean the page misbehaved: script errors and CSP violations. */
export function watchPage(page: Page): { errors: string[] } {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/Failed to load resource|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|net::/.test(msg.text())) {
      errors.push(`console: ${msg.text()}`);
    }
  });
  return { errors };
}
