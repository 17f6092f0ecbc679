import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgliteBackend } from "../support/backends.js";
import { startTestServer, type TestServer } from "../support/server.js";

const SRC = join(process.cwd(), "console", "src");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : [join(dir, d.name)]));
}

describe("the console's source", () => {
  // The CSP already stops injected scripts; building every node as text means
  // nothing is injected in the first place. These APIs parse strings as code
  // or markup: none may appear.
  it("never parses a string as HTML or code", () => {
    const banned =
      /\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|createContextualFragment|DOMParser|srcdoc/;
    for (const file of files(SRC)) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(banned);
    }
  });

  it("builds a page with no inline script or style", () => {
    const html = readFileSync(join(process.cwd(), "console", "dist", "index.html"), "utf8");
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
  });
});

describe("serving the console", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(pgliteBackend);
  });
  afterAll(async () => {
    await t?.close();
  });

  const expectSecurityHeaders = (res: Response) => {
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  };

  it("serves the page at / with its security headers, and its assets by content hash", async () => {
    const page = await fetch(`${t.server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expectSecurityHeaders(page);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const asset of assets) {
      const res = await fetch(`${t.server.url}${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("content-type")).toMatch(asset.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
      expect(res.headers.get("cache-control")).toContain("immutable");
      expectSecurityHeaders(res);
      // Revalidation answers 304 without a body.
      const again = await fetch(`${t.server.url}${asset}`, { headers: { "if-none-match": res.headers.get("etag") ?? "" } });
      expect(again.status).toBe(304);
    }
    const head = await fetch(`${t.server.url}/index.html`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("leaves every other path to the RPC handler on the same port", async () => {
    const missing = await fetch(`${t.server.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-security-policy")).toBeNull();
    const rpc = await fetch(`${t.server.url}/sessionstore.v1.ConsoleService/WhoAmI`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(rpc.status).toBe(200);
    expect(await rpc.json()).toEqual({ allApps: true });
  });
});
