import { create, type JsonObject, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { sql } from "kysely";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { hashToken } from "../../src/auth/tokens.js";
import { type Config, defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { pgliteBackend } from "../support/backends.js";
import { browserAvailable, DESKTOP, launchBrowser, NARROW, screenshot, watchPage } from "../support/browser.js";
import { expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

// The console in a real browser (Debian's chromium through playwright-core)
// against a real server on the embedded store, with data written through
// the gRPC API. Every wait is on a condition in the page.

type EventInit = MessageInitShape<typeof EventSchema>;

/** The few browser globals the page-side callbacks read (the suite compiles without the DOM library). */
interface PageGlobals {
  __xss?: number;
  __violations: string[];
  document: {
    scripts: { length: number };
    cookie: string;
    documentElement: { scrollWidth: number };
    querySelectorAll(selector: string): Iterable<{ getAttribute(name: string): string | null }> & { length: number };
    addEventListener(type: "securitypolicyviolation", listener: (e: { violatedDirective: string }) => void): void;
  };
  sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  localStorage: { length: number };
}

const text = (value: string) => ({ data: { case: "text" as const, value } });

const secrets = { reader: "sst_reader-secret", admin: "sst_admin-secret", ada: "sst_ada-secret" };

describe.skipIf(!browserAvailable)("the web console in chromium", () => {
  let browser: Browser;
  let database: OpenDatabase;
  let server: RunningServer;
  let client: Client<typeof SessionService>;
  let port = 0;
  const app = unique("shop");
  const config = (overrides: Partial<Config> = {}): Config => ({
    ...defaults,
    host: "127.0.0.1",
    port,
    shutdownGraceMs: 1000,
    heartbeatMs: 1000,
    ...overrides,
  });
  const start = async (overrides: Partial<Config> = {}) => {
    server = await startServer(config(overrides), { logger: silentLogger, database });
    port = server.port;
    client = createClient(SessionService, createGrpcTransport({ baseUrl: server.url }));
  };

  // The conversation every view test opens, and the deltas it was given, for
  // the independent fold.
  const conv = { appName: app, userId: "ada", sessionId: "conv" };
  const convInitial: JsonObject = { channel: "chat", "user:tier": "silver", "temp:draft": "x" };
  const convEvents: EventInit[] = [
    { author: "user", content: { role: "user", parts: [text("Where is my order A-1?")] } },
    {
      author: "support_agent",
      content: {
        role: "model",
        parts: [
          { data: { case: "functionCall", value: { id: "c1", name: "find_order", args: { order_id: "A-1", fields: ["status", "eta"] } } } },
        ],
      },
      actions: { stateDelta: { last_tool: "find_order", "temp:scratch": 1 } },
    },
    {
      author: "support_agent",
      content: {
        role: "user",
        parts: [
          { data: { case: "functionResponse", value: { id: "c1", name: "find_order", response: { status: "shipped", eta: "tomorrow" } } } },
        ],
      },
    },
    {
      author: "support_agent",
      content: { role: "model", parts: [text("Your order A-1 has shipped and arrives tomorrow.")] },
      actions: { stateDelta: { order: { id: "A-1", status: "shipped" }, "user:tier": "gold", "app:open_tickets": 3, channel: null } },
    },
    { author: "router", branch: "router.billing", actions: { transferToAgent: "billing_agent" } },
    {
      author: "billing_agent",
      branch: "router.billing",
      errorCode: "RATE_LIMIT",
      errorMessage: "quota exhausted",
      actions: { escalate: true, stateDelta: { last_tool: null } },
    },
  ];
  const foldAt = (n: number): JsonObject => {
    let state: JsonObject = Object.fromEntries(Object.entries(convInitial).filter(([k]) => !k.startsWith("temp:")));
    for (const e of convEvents.slice(0, n)) {
      const delta = Object.fromEntries(Object.entries((e.actions?.stateDelta ?? {}) as JsonObject).filter(([k]) => !k.startsWith("temp:")));
      state = { ...state, ...delta };
    }
    return state;
  };

  beforeAll(async () => {
    browser = await launchBrowser();
    database = await pgliteBackend.open();
    await start();
    for (let i = 0; i < 60; i++) {
      await client.createSession({ appName: app, userId: `u${i % 6}`, sessionId: `s${String(i).padStart(2, "0")}`, state: { n: i } });
    }
    await client.createSession({ ...conv, state: convInitial });
    for (const event of convEvents) await client.appendEvent({ ...conv, event });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await database?.close();
  });

  const open = async (path: string, viewport = DESKTOP, context?: BrowserContext): Promise<{ page: Page; errors: string[] }> => {
    const ctx = context ?? (await browser.newContext({ viewport }));
    const page = await ctx.newPage();
    page.setDefaultTimeout(20_000);
    const { errors } = watchPage(page);
    await page.goto(`${server.url}/${path}`);
    return { page, errors };
  };
  const sessionPath = (key: { appName: string; userId: string; sessionId: string }, seq?: number) =>
    `#/apps/${encodeURIComponent(key.appName)}/users/${encodeURIComponent(key.userId)}/sessions/${encodeURIComponent(key.sessionId)}${seq ? `/events/${seq}` : ""}`;

  it("lists apps, pages an app's sessions newest first, and searches by user and by session id", async () => {
    const { page, errors } = await open("");
    await page.locator(`[data-app="${app}"]`).click();
    const rows = page.locator("tbody tr[data-session]");
    await expect.poll(() => rows.count()).toBe(50);
    // The conversation was written last: the most recent first.
    expect(await rows.first().getAttribute("data-session")).toBe("conv");
    await screenshot(page, "sessions-desktop");
    await page.locator("[data-page=next]").click();
    await expect.poll(() => rows.count()).toBe(11);
    expect(await rows.last().getAttribute("data-session")).toBe("s00");
    await page.locator("[data-page=prev]").click();
    await expect.poll(() => rows.first().getAttribute("data-session")).toBe("conv");

    await page.locator("select[name=kind]").selectOption("user");
    await page.locator("input[name=q]").fill("u1");
    await page.locator("input[name=q]").press("Enter");
    await expect.poll(() => rows.count()).toBe(10);
    expect(new Set(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-user"))))).toEqual(new Set(["u1"]));
    expect(page.url()).toContain("?user=u1");

    await page.locator("select[name=kind]").selectOption("session");
    await page.locator("input[name=q]").fill("conv");
    await page.locator("input[name=q]").press("Enter");
    await expect.poll(() => rows.count()).toBe(1);
    await rows.first().locator("a").first().click();
    await page.locator(".event[data-seq='6']").waitFor();
    expect(errors).toEqual([]);
  });

  it("opens a session, folds and unfolds a tool call with its paired response, and marks errors and transfers", async () => {
    const { page, errors } = await open(sessionPath(conv));
    const call = page.locator(".event[data-seq='2']");
    await call.locator("button[data-fold=call]").waitFor();
    expect(await call.locator("pre.args").count()).toBe(0);
    expect(await call.locator(".paired").textContent()).toBe("↩ #3");
    await call.locator("button[data-fold=call]").click();
    await call.locator("pre.args").waitFor();
    // Pretty-printed, and the response from event 3 beside it.
    expect(await call.locator("pre.args").textContent()).toBe(JSON.stringify({ order_id: "A-1", fields: ["status", "eta"] }, null, 2));
    expect(await call.locator(".response pre").textContent()).toBe(JSON.stringify({ status: "shipped", eta: "tomorrow" }, null, 2));
    expect(await call.getAttribute("data-author")).toBe("support_agent");
    await screenshot(page, "session-desktop");
    await call.locator("button[data-fold=call]").click();
    await expect.poll(() => call.locator("pre.args").count()).toBe(0);

    expect(await page.locator(".event[data-seq='3'] .paired").textContent()).toBe("call #2");
    expect(await page.locator(".event[data-seq='5'] .badge-transfer").textContent()).toBe("transfer → billing_agent");
    expect(await page.locator(".event[data-seq='5'] .branch").textContent()).toBe("router.billing");
    const failed = page.locator(".event[data-seq='6']");
    expect(await failed.getAttribute("class")).toContain("is-error");
    expect(await failed.locator(".error-line").textContent()).toBe("RATE_LIMIT: quota exhausted");
    expect(await failed.locator(".badge-escalate").count()).toBe(1);
    // The delta of event 4 as a diff, scopes apart.
    const delta = page.locator(".event[data-seq='4'] .delta-row");
    expect(await delta.evaluateAll((rows) => rows.map((r) => [r.className, r.querySelector(".key")?.textContent]))).toEqual([
      ["delta-row scope-app", "app:open_tickets"],
      ["delta-row scope-session", "channel"],
      ["delta-row scope-session", "order"],
      ["delta-row scope-user", "user:tier"],
    ]);
    expect(await page.locator(".event[data-seq='4'] .scope-user .before").textContent()).toBe('"silver"');
    expect(errors).toEqual([]);
  });

  it("scrubs the state to event N and shows the fold of the deltas up to it, with the diff from N-1", async () => {
    const { page, errors } = await open(sessionPath(conv));
    const label = page.locator("[data-testid=scrub-label]");
    await expect.poll(() => label.textContent()).toBe("state after event 6 of 6");
    const shown = async () => JSON.parse((await page.locator("[data-testid=replay-json]").textContent()) ?? "null") as JsonObject;
    for (const n of [0, 2, 4, 5, 6]) {
      await page.locator("input[type=range]").fill(String(n));
      await expect.poll(() => label.textContent()).toBe(`state after event ${n} of 6`);
      await expect.poll(shown).toEqual(foldAt(n));
    }
    await page.locator("input[type=range]").fill("4");
    await expect.poll(shown).toEqual(foldAt(4));
    const diff = page.locator("[data-testid=replay-diff] .delta-row");
    expect(await diff.evaluateAll((rows) => rows.map((r) => [...r.classList].find((c) => c.startsWith("change-"))))).toEqual([
      "change-added",
      "change-changed",
      "change-added",
      "change-changed",
    ]);
    // Selecting an event in the timeline scrubs to it, and its URL names it.
    await page.locator(".event[data-seq='2'] .event-head .time").click();
    await expect.poll(() => label.textContent()).toBe("state after event 2 of 6");
    await expect.poll(shown).toEqual(foldAt(2));
    expect(page.url()).toContain(sessionPath(conv, 2));
    // And from the keyboard.
    await page.keyboard.press("j");
    await expect.poll(() => label.textContent()).toBe("state after event 3 of 6");
    await page.keyboard.press("k");
    await expect.poll(() => label.textContent()).toBe("state after event 2 of 6");
    await page.keyboard.press("o");
    await page.locator(".event[data-seq='2'] pre.args").waitFor();
    await screenshot(page, "replay-desktop");
    // The deep link opens on that event.
    const linked = await open(sessionPath(conv, 5));
    await expect.poll(() => linked.page.locator("[data-testid=scrub-label]").textContent()).toBe("state after event 5 of 6");
    expect(await linked.page.locator(".event[data-seq='5']").getAttribute("class")).toContain("is-selected");
    expect([...errors, ...linked.errors]).toEqual([]);
  });

  it("follows a session live, and resumes without duplicates after losing the server", async () => {
    const key = { appName: app, userId: "grace", sessionId: unique("live") };
    await client.createSession(key);
    const { page, errors } = await open(sessionPath(key));
    const badge = page.locator(".live-badge");
    await expect.poll(() => badge.getAttribute("data-status")).toBe("live");
    await client.appendEvent({ ...key, event: { author: "user", content: { parts: [text("first")] } } });
    await page.locator(".event[data-seq='1']").waitFor();

    // The server goes away; an event is written meanwhile through another
    // server on the same store; the first comes back on the same port.
    await server.close();
    await expect.poll(() => badge.getAttribute("data-status")).toBe("reconnecting");
    const other = await startServer(config({ port: 0 }), { logger: silentLogger, database });
    await createClient(SessionService, createGrpcTransport({ baseUrl: other.url })).appendEvent({
      ...key,
      event: { author: "agent", content: { parts: [text("written while the page was away")] } },
    });
    await other.close();
    await start();
    await expect.poll(() => badge.getAttribute("data-status"), { timeout: 30_000 }).toBe("live");
    await page.locator(".event[data-seq='2']").waitFor();
    await client.appendEvent({ ...key, event: { author: "user", content: { parts: [text("third")] } } });
    await page.locator(".event[data-seq='3']").waitFor();
    const seqs = await page.locator(".event").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-seq")));
    expect(seqs).toEqual(["1", "2", "3"]);
    expect(await page.locator("[data-testid=revision]").textContent()).toBe("3 events");
    expect(errors).toEqual([]);
  });

  it("shows an app-wide live feed, filtered by user on the server and by author on the page", async () => {
    const { page, errors } = await open(`#/apps/${app}/live`);
    const badge = page.locator(".live-badge");
    await expect.poll(() => badge.getAttribute("data-status")).toBe("live");
    const a = { appName: app, userId: "feed-a", sessionId: unique("f") };
    const b = { appName: app, userId: "feed-b", sessionId: unique("f") };
    await client.createSession(a);
    await client.createSession(b);
    await client.appendEvent({ ...a, event: { author: "user", content: { parts: [text("hello from a")] } } });
    await client.appendEvent({ ...b, event: { author: "billing_agent", content: { parts: [text("hello from b")] } } });
    const rows = page.locator(".feed-row");
    await expect.poll(() => rows.count()).toBe(2);
    await screenshot(page, "live-desktop");
    await page.locator("input[name=author]").fill("billing_agent");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-session")).toBe(b.sessionId);

    await page.locator("input[name=author]").fill("");
    await page.locator("input[name=user]").fill("feed-a");
    await page.locator("input[name=user]").press("Enter");
    await expect.poll(() => badge.getAttribute("data-status")).toBe("live");
    await client.appendEvent({ ...b, event: { author: "user", content: { parts: [text("b again")] } } });
    await client.appendEvent({ ...a, event: { author: "user", content: { parts: [text("a again")] } } });
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-session")).toBe(a.sessionId);
    expect(errors).toEqual([]);
  });

  it("renders hostile content as text: no markup, no script, no javascript: link", async () => {
    const hostile = "<script>window.__xss=1</script><img src=x onerror=window.__xss=1>";
    const key = { appName: app, userId: "<img src=x onerror=window.__xss=1>", sessionId: "<svg onload=window.__xss=1>" };
    await client.createSession({ ...key, state: { "<script>": hostile } });
    await client.appendEvent({
      ...key,
      event: {
        author: "<b onmouseover=window.__xss=1>agent</b>",
        branch: "<iframe src=javascript:window.__xss=1>",
        errorMessage: hostile,
        content: {
          parts: [
            text(hostile),
            {
              data: {
                case: "fileData",
                value: { mimeType: "text/html", fileUri: "javascript:window.__xss=1", displayName: "<a href=javascript:x>" },
              },
            },
            {
              data: {
                case: "functionCall",
                value: { id: "x", name: "<svg/onload=window.__xss=1>", args: { url: "javascript:window.__xss=1" } },
              },
            },
          ],
        },
        actions: { stateDelta: { "<img src=x onerror=window.__xss=1>": hostile }, transferToAgent: "<script>t()</script>" },
      },
    });
    const context = await browser.newContext({ viewport: DESKTOP });
    await context.addInitScript(() => {
      const g = globalThis as unknown as PageGlobals;
      g.__violations = [];
      g.document.addEventListener("securitypolicyviolation", (e) => g.__violations.push(e.violatedDirective));
    });
    const check = async (page: Page) => {
      const found = await page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        return {
          xss: g.__xss,
          violations: g.__violations,
          scripts: g.document.scripts.length,
          injected: g.document.querySelectorAll("main img, main svg, main iframe, main script, main b, main [onerror], main [onload]")
            .length,
          links: [...g.document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href") ?? ""),
        };
      });
      expect(found.xss).toBeUndefined();
      expect(found.violations).toEqual([]);
      expect(found.scripts).toBe(1);
      expect(found.injected).toBe(0);
      for (const link of found.links) expect(link).toMatch(/^#\//);
    };

    const { page, errors } = await open(sessionPath(key), DESKTOP, context);
    const row = page.locator(".event[data-seq='1']");
    await row.waitFor();
    await row.locator("button[data-fold=call]").click();
    await row.locator("pre.args").waitFor();
    expect(await row.locator(".text").textContent()).toBe(hostile);
    expect(await row.locator(".author").textContent()).toBe("<b onmouseover=window.__xss=1>agent</b>");
    expect(await row.locator(".blob").textContent()).toContain("javascript:window.__xss=1");
    expect(await row.locator(".error-line").textContent()).toBe(hostile);
    expect(await page.locator("h1").textContent()).toBe(key.sessionId);
    await page.locator(".event[data-seq='1'] .event-head .time").click();
    await page.locator("[data-testid=event-panel] pre").waitFor();
    await check(page);

    await page.goto(`${server.url}/#/apps/${app}?user=${encodeURIComponent(key.userId)}`);
    await page.locator("tbody tr[data-session]").first().waitFor();
    expect(await page.locator("tbody tr td.preview").first().textContent()).toContain("<script>");
    await check(page);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opens a session of 10,000 events with only the rows in view in the page", async () => {
    const key = { appName: app, userId: "long", sessionId: "ten-thousand" };
    await client.createSession({ ...key, state: { start: true } });
    // Loaded in one statement, as stored bytes: 10,000 appends through the API add nothing here.
    const pk = (await database.db.selectFrom("sessions").select("pk").where("id", "=", key.sessionId).executeTakeFirstOrThrow()).pk;
    const N = 10_000;
    const base = 1_700_000_000n;
    const bodies = Array.from({ length: N }, (_, i) =>
      toBinary(
        EventSchema,
        create(EventSchema, {
          id: `e${i + 1}`,
          seq: BigInt(i + 1),
          author: i % 2 ? "agent" : "user",
          timestamp: { seconds: base + BigInt(i), nanos: 0 },
          content: { parts: [text(`message ${i + 1}`)] },
          actions: { stateDelta: { count: i + 1, [`k${i % 3}`]: i } },
        }),
      ),
    );
    await sql`
      INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
      SELECT ${pk}, s, 'e' || s, (${base} + s - 1) * 1000000000, b, ${key.appName}, ${key.userId}
      FROM unnest(${bodies}::bytea[]) WITH ORDINALITY AS t (b, s)`.execute(database.db);
    await sql`UPDATE sessions SET revision = ${N}, state = ${JSON.stringify({ start: true, count: N, k0: 9999, k1: 9997, k2: 9998 })}::jsonb WHERE pk = ${pk}`.execute(
      database.db,
    );

    const { page, errors } = await open(sessionPath(key));
    // Following: the newest event is in view once the history is loaded.
    await page.locator(".event[data-seq='10000']").waitFor();
    await expect.poll(() => page.locator(".status").first().textContent()).toBe("10000 events");
    expect(await page.locator(".event").count()).toBeLessThan(200);
    await expect
      .poll(async () => JSON.parse((await page.locator("[data-testid=replay-json]").textContent()) ?? "null"))
      .toEqual({
        start: true,
        count: N,
        k0: 9999,
        k1: 9997,
        k2: 9998,
      });
    // Jumping to an early event renders that region only.
    await page.locator("input[type=range]").fill("10");
    await page.locator(".event[data-seq='10']").waitFor();
    expect(await page.locator(".event").count()).toBeLessThan(200);
    expect(errors).toEqual([]);
  });

  it("fits a narrow screen", async () => {
    const list = await open(`#/apps/${app}`, NARROW);
    await list.page.locator("tbody tr[data-session]").first().waitFor();
    await screenshot(list.page, "sessions-narrow");
    const session = await open(sessionPath(conv), NARROW);
    await session.page.locator(".event[data-seq='6']").waitFor();
    await expect.poll(() => session.page.locator(".live-badge").getAttribute("data-status")).toBe("live");
    // Nothing wider than the screen.
    expect(
      await session.page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth),
    ).toBeLessThanOrEqual(NARROW.width);
    await screenshot(session.page, "session-narrow");
    expect([...list.errors, ...session.errors]).toEqual([]);
  });

  describe("with tokens", () => {
    let secured: RunningServer;
    beforeAll(async () => {
      secured = await startServer(
        config({
          port: 0,
          tokens: JSON.stringify([
            { name: "reader", sha256: hashToken(secrets.reader), apps: [app], readOnly: true },
            { name: "admin", sha256: hashToken(secrets.admin), apps: [app] },
            { name: "ada", sha256: hashToken(secrets.ada), apps: [app], user: "ada" },
          ]),
        }),
        { logger: silentLogger, database },
      );
    });
    afterAll(async () => {
      await secured?.close();
    });

    const signIn = async (token: string) => {
      const context = await browser.newContext({ viewport: DESKTOP });
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const { errors } = watchPage(page);
      await page.goto(`${secured.url}/${sessionPath(conv)}`);
      await page.locator("input#token").fill(token);
      await page.locator("input#token").press("Enter");
      return { page, errors, context };
    };

    it("asks for a token, refuses a wrong one, and keeps a good one for the tab only", async () => {
      const { page, context } = await signIn("sst_wrong");
      await expect.poll(() => page.locator(".token-form .error-line").textContent()).toContain("unknown or revoked token");
      await screenshot(page, "token-desktop");
      await page.locator("input#token").fill(secrets.reader);
      await page.locator("input#token").press("Enter");
      await expect.poll(() => page.locator("[data-testid=grant]").textContent()).toContain('token "reader"');
      expect(await page.locator("[data-testid=grant]").textContent()).toContain("read-only");
      expect(
        await page.evaluate(() => {
          const g = globalThis as unknown as PageGlobals;
          return [g.sessionStorage.getItem("sessionstore.token"), g.localStorage.length, g.document.cookie];
        }),
      ).toEqual([secrets.reader, 0, ""]);
      // A read-only console: the session opens, with no write action.
      await page.locator(".event[data-seq='6']").waitFor();
      expect(await page.locator("[data-action]").evaluateAll((els) => els.map((e) => e.getAttribute("data-action")))).toEqual(["sign-out"]);
      // The tab keeps it across a reload; another tab does not have it.
      await page.reload();
      await page.locator(".event[data-seq='6']").waitFor();
      const other = await context.browser()?.newContext();
      const fresh = await other?.newPage();
      await fresh?.goto(`${secured.url}/`);
      await fresh?.locator("input#token").waitFor();
      await other?.close();
      await context.close();
    });

    it("gives a token limited to one user that user's sessions and feed", async () => {
      const { page, context, errors } = await signIn(secrets.ada);
      await expect.poll(() => page.locator("[data-testid=grant]").textContent()).toContain("user ada only");
      await page.goto(`${secured.url}/#/apps/${app}`);
      const rows = page.locator("tbody tr[data-session]");
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().getAttribute("data-user")).toBe("ada");
      await page.goto(`${secured.url}/#/apps/${app}/live`);
      await expect.poll(() => page.locator(".live-badge").getAttribute("data-status")).toBe("live");
      expect(errors).toEqual([]);
      await context.close();
    });

    it("deletes a session only after confirmation, with a token that may write", async () => {
      const key = { appName: app, userId: "doomed", sessionId: "bye" };
      await client.createSession(key);
      const context = await browser.newContext({ viewport: DESKTOP });
      await context.addInitScript(
        (token) => (globalThis as unknown as PageGlobals).sessionStorage.setItem("sessionstore.token", token),
        secrets.admin,
      );
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const { errors } = watchPage(page);
      await page.goto(`${secured.url}/${sessionPath(key)}`);
      await page.locator("[data-action=delete-session]").click();
      await page.locator("dialog [data-action=cancel]").click();
      await expect.poll(() => page.locator("dialog").count()).toBe(0);
      expect((await client.getSession(key)).session?.id).toBe("bye");
      await page.locator("[data-action=delete-session]").click();
      await page.locator("dialog [data-action=confirm]").click();
      await expect.poll(() => page.url()).toContain(`#/apps/${app}?user=doomed`);
      await expectCode(client.getSession(key), Code.NotFound);
      expect(errors).toEqual([]);
      await context.close();
    });
  });
});
