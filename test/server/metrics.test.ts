import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { hashToken, loadTokens, newToken, TokenConfigError } from "../../src/auth/tokens.js";
import { createSessionStoreClient } from "../../src/client/create-client.js";
import { defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { startServer } from "../../src/server/server.js";
import { backends } from "../support/backends.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TailRecorder } from "../support/tail.js";

const HOUR_NS = 3_600_000_000_000n;
const policy = JSON.stringify({
  defaults: { ttlSeconds: 3600, limits: { maxEventsPerSession: 1000, maxEventBytes: 4000, maxStateBytes: 400 } },
});

/** The Prometheus text parsed into samples: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k as string] = v as string;
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.reduce((sum, s) => sum + s.value, 0);
}

async function scrape(t: TestServer, token?: string): Promise<Sample[]> {
  const res = await fetch(`${t.server.url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

/** Scrapes until `ok` holds: counters read at a scrape may trail the answer the client got by a tick. */
async function scrapeUntil(t: TestServer, ok: (s: Sample[]) => boolean): Promise<Sample[]> {
  for (let i = 0; ; i++) {
    const samples = await scrape(t);
    if (ok(samples)) return samples;
    if (i === 200) throw new Error("the metrics never got there");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const SESSION_SERVICE = "sessionstore.v1.SessionService";

describeContract(
  "metrics",
  (t, backend) => {
    it("serves the process's and the server's series before any traffic", async () => {
      const samples = await scrape(t());
      const names = new Set(samples.map((s) => s.name));
      for (const name of [
        "process_cpu_user_seconds_total",
        "nodejs_eventloop_lag_seconds",
        "sessionstore_events_stored_total",
        "sessionstore_listen_reconnects_total",
        "sessionstore_sessions_swept_total",
        "sessionstore_database_reachable",
      ])
        expect(names, name).toContain(name);
      expect(value(samples, "sessionstore_database_reachable")).toBe(1);
      expect(names.has("sessionstore_db_pool_connections")).toBe(backend.name === "postgres");
    });

    it("counts RPCs by service, method, code and protocol, on gRPC's fast path and Connect's", async () => {
      const before = await scrape(t());
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      await expectCode(t().client.getSession({ ...key, sessionId: "missing" }), Code.NotFound);
      const connect = createClient(SessionService, createConnectTransport({ baseUrl: t().server.url, httpVersion: "1.1" }));
      await connect.getSession(key);
      const labels = (method: string, code: string, protocol: string) => ({ service: SESSION_SERVICE, method, code, protocol });
      const moved = (after: typeof before, name: string, l: Record<string, string>) => value(after, name, l) - value(before, name, l);
      const after = await scrapeUntil(t(), (s) => moved(s, "sessionstore_rpc_handled_total", labels("GetSession", "OK", "connect")) === 1);
      expect(moved(after, "sessionstore_rpc_handled_total", labels("CreateSession", "OK", "grpc"))).toBe(1);
      expect(moved(after, "sessionstore_rpc_handled_total", labels("GetSession", "NOT_FOUND", "grpc"))).toBe(1);
      expect(moved(after, "sessionstore_rpc_duration_seconds_count", labels("GetSession", "NOT_FOUND", "grpc"))).toBe(1);
      expect(moved(after, "sessionstore_rpc_duration_seconds_bucket", { ...labels("CreateSession", "OK", "grpc"), le: "+Inf" })).toBe(1);
    });

    it("counts appends, stored events and their group-commit batches", async () => {
      const before = await scrape(t());
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      const event = { id: unique("e"), author: "user" };
      await t().client.appendEvent({ ...key, event });
      await t().client.appendEvent({ ...key, event });
      await Promise.all(Array.from({ length: 5 }, () => t().client.appendEvent({ ...key, event: { author: "agent" } })));
      const moved = (after: typeof before, name: string, l: Record<string, string> = {}) => value(after, name, l) - value(before, name, l);
      const after = await scrapeUntil(t(), (s) => moved(s, "sessionstore_appends_total") === 7);
      expect(moved(after, "sessionstore_appends_total", { outcome: "ok" })).toBe(6);
      expect(moved(after, "sessionstore_appends_total", { outcome: "duplicate" })).toBe(1);
      expect(moved(after, "sessionstore_events_stored_total")).toBe(6);
      // However the seven were batched, every one of them went in one.
      expect(moved(after, "sessionstore_append_batch_size_sum")).toBe(7);
      expect(moved(after, "sessionstore_append_batch_wait_seconds_count")).toBe(7);
    });

    it("shows open tails by scope while they are open", async () => {
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      const base = await scrape(t());
      const session = new TailRecorder(t().client, key);
      const app = new TailRecorder(t().client, { appName: key.appName });
      await session.until((r) => r.caughtUp);
      await app.until((r) => r.caughtUp);
      const open = await scrape(t());
      expect(
        value(open, "sessionstore_tails_open", { scope: "session" }) - value(base, "sessionstore_tails_open", { scope: "session" }),
      ).toBe(1);
      expect(value(open, "sessionstore_tails_open", { scope: "app" }) - value(base, "sessionstore_tails_open", { scope: "app" })).toBe(1);
      session.cancel();
      app.cancel();
      const closed = await scrapeUntil(
        t(),
        (s) =>
          value(s, "sessionstore_tails_open", { scope: "session" }) === value(base, "sessionstore_tails_open", { scope: "session" }) &&
          value(s, "sessionstore_rpc_handled_total", { method: "StreamEvents", code: "CANCELED" }) >=
            value(base, "sessionstore_rpc_handled_total", { method: "StreamEvents", code: "CANCELED" }) + 2,
      );
      expect(value(closed, "sessionstore_tails_open", { scope: "app" })).toBe(value(base, "sessionstore_tails_open", { scope: "app" }));
    });

    it("times the feed lag from an append's commit to each tail that hands it over, by scope", async () => {
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      // Without tails nothing is timed, so nothing is kept.
      await t().client.appendEvent({ ...key, event: { author: "user" } });
      expect(t().server.streams.commitTimes.size).toBe(0);
      const before = await scrape(t());
      const session = new TailRecorder(t().client, { ...key, start: { case: "fromNow", value: {} } });
      const user = new TailRecorder(t().client, { appName: key.appName, userId: key.userId, start: { case: "fromNow", value: {} } });
      const app = new TailRecorder(t().client, { appName: key.appName, start: { case: "fromNow", value: {} } });
      const tails = [session, user, app];
      for (const tail of tails) await tail.until((r) => r.caughtUp);
      const event = { id: unique("e"), author: "agent" };
      await t().client.appendEvent({ ...key, event });
      for (const tail of tails) await tail.until((r) => r.events.some((e) => e.event?.id === event.id));
      const lag = (s: Sample[], scope: string) =>
        value(s, "sessionstore_feed_lag_seconds_count", { scope }) - value(before, "sessionstore_feed_lag_seconds_count", { scope });
      const after = await scrapeUntil(t(), (s) => lag(s, "session") === 1 && lag(s, "user") === 1 && lag(s, "app") === 1);
      // One delivery per tail, and each took some time, however little.
      expect(value(after, "sessionstore_feed_lag_seconds_sum", { scope: "app" })).toBeGreaterThan(
        value(before, "sessionstore_feed_lag_seconds_sum", { scope: "app" }),
      );
      // Events read from the table's history (not committed while this server was timing them) are not feed lag.
      const replay = new TailRecorder(t().client, key);
      await replay.until((r) => r.caughtUp && r.events.length === 2);
      replay.cancel();
      for (const tail of tails) tail.cancel();
      const replayed = await scrapeUntil(
        t(),
        (s) => value(s, "sessionstore_tails_open", { scope: "session" }) === value(before, "sessionstore_tails_open", { scope: "session" }),
      );
      expect(lag(replayed, "session")).toBe(1);
    });

    it("counts database errors by class, redactions by detector and swept sessions", async () => {
      const before = await scrape(t());
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession({ ...key, state: { contact: "ada@example.com" } });
      // Over maxStateBytes only once written: the append function raises SS001.
      await expectCode(
        t().client.appendEvent({ ...key, event: { author: "user", actions: { stateDelta: { "user:big": "x".repeat(390) } } } }),
        Code.ResourceExhausted,
      );
      await sql`UPDATE sessions SET update_time_ns = update_time_ns - ${2n * HOUR_NS} WHERE app_name = ${key.appName}`.execute(
        t().database.db,
      );
      expect(await t().server.sweeper.sweepOnce()).toBeGreaterThanOrEqual(1);
      const moved = (after: typeof before, name: string, l: Record<string, string> = {}) => value(after, name, l) - value(before, name, l);
      const after = await scrape(t());
      expect(moved(after, "sessionstore_database_errors_total", { class: "SS" })).toBe(1);
      expect(moved(after, "sessionstore_redactions_total", { detector: "email" })).toBe(1);
      expect(moved(after, "sessionstore_sessions_swept_total")).toBeGreaterThanOrEqual(1);
      expect(moved(after, "sessionstore_rpc_handled_total", { method: "AppendEvent", code: "RESOURCE_EXHAUSTED" })).toBe(1);
    });

    it.skipIf(backend.name !== "postgres")("counts the pool's connections and LISTEN reconnects", async () => {
      const before = await scrape(t());
      expect(value(before, "sessionstore_db_pool_connections")).toBeGreaterThan(0);
      expect(value(before, "sessionstore_db_pool_waiting")).toBe(0);
      const pid = t().server.streams.notifications?.backendPid;
      expect(pid).toBeTypeOf("number");
      const admin = new pg.Client({ connectionString: inject("postgresAdminUrl") });
      await admin.connect();
      try {
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      } finally {
        await admin.end();
      }
      await scrapeUntil(
        t(),
        (s) => value(s, "sessionstore_listen_reconnects_total") === value(before, "sessionstore_listen_reconnects_total") + 1,
      );
    });
  },
  { policy },
);

describe("token rules", () => {
  it("accepts a scope-only token, which grants no app", () => {
    const store = loadTokens(JSON.stringify([{ name: "prom", sha256: hashToken("p"), scopes: ["metrics"] }]), undefined);
    const grant = store.lookup("p");
    expect(grant?.scopes.has("metrics")).toBe(true);
    expect(grant?.apps).toEqual(new Set());
    expect(() => loadTokens(JSON.stringify([{ sha256: hashToken("p"), scopes: ["admin"] }]), undefined)).toThrow(TokenConfigError);
    expect(() => loadTokens(JSON.stringify([{ sha256: hashToken("p") }]), undefined)).toThrow(/apps must be/);
  });
});

const secrets = { metrics: newToken(), admin: newToken(), reader: newToken(), app: newToken(), user: newToken() };
const tokens = JSON.stringify([
  { name: "prometheus", sha256: hashToken(secrets.metrics), scopes: ["metrics"] },
  { name: "admin", sha256: hashToken(secrets.admin), apps: "*" },
  { name: "reader", sha256: hashToken(secrets.reader), apps: "*", readOnly: true },
  { name: "app", sha256: hashToken(secrets.app), apps: ["a"] },
  { name: "user", sha256: hashToken(secrets.user), apps: "*", user: "u1" },
]);

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`metrics with tokens [${backend.name}]`, () => {
    let t: TestServer | undefined;
    beforeAll(async () => {
      t = await startTestServer(backend, { tokens });
    });
    afterAll(async () => {
      await t?.close();
    });
    const server = () => t as TestServer;
    const status = async (init: RequestInit = {}, path = "/metrics") => (await fetch(`${server().server.url}${path}`, init)).status;
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

    it("refuses a scrape without a token, with an unknown one, or with one for some apps or one user", async () => {
      const res = await fetch(`${server().server.url}/metrics`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await res.text()).not.toMatch(/sessionstore_/);
      expect(await status(bearer(newToken()))).toBe(401);
      expect(await status({ headers: { authorization: "Basic abc" } })).toBe(401);
      expect(await status(bearer(secrets.app))).toBe(403);
      expect(await status(bearer(secrets.user))).toBe(403);
      expect(await status({ method: "POST", ...bearer(secrets.metrics) })).toBe(405);
    });

    it("serves a token with the metrics scope and any token for every app and user", async () => {
      for (const token of [secrets.metrics, secrets.admin, secrets.reader]) {
        expect(value(await scrape(server(), token), "sessionstore_database_reachable")).toBe(1);
      }
      // The console's page is still served at `/`.
      expect(await status({}, "/")).toBe(200);
    });

    it("gives a metrics-only token no app, and counts the refusal", async () => {
      const client = createSessionStoreClient(server().server.url, { token: secrets.metrics });
      await expectCode(client.getSession({ appName: "a", userId: "u1", sessionId: "s" }), Code.PermissionDenied);
      await expectCode(createSessionStoreClient(server().server.url).listSessions({ appName: "a" }), Code.Unauthenticated);
      const samples = await scrape(server(), secrets.metrics);
      expect(value(samples, "sessionstore_rpc_handled_total", { method: "GetSession", code: "PERMISSION_DENIED" })).toBe(1);
      expect(value(samples, "sessionstore_rpc_handled_total", { method: "ListSessions", code: "UNAUTHENTICATED" })).toBe(1);
    });
  });
}

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`metrics on their own port [${backend.name}]`, () => {
    let t: TestServer | undefined;
    beforeAll(async () => {
      t = await startTestServer(backend, { tokens, metricsPort: 0 });
    });
    afterAll(async () => {
      await t?.close();
    });
    const server = () => t as TestServer;
    const metricsUrl = () => {
      const url = server().server.metricsUrl;
      if (!url) throw new Error("no metrics port");
      return url;
    };

    it("serves /metrics alone, over plain HTTP, with the main port's token rule", async () => {
      expect(metricsUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(new URL(metricsUrl()).port).not.toBe(String(server().server.port));
      const res = await fetch(`${metricsUrl()}/metrics`);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toMatch(/sessionstore_/);
      expect((await fetch(`${metricsUrl()}/metrics`, { headers: { authorization: `Bearer ${secrets.app}` } })).status).toBe(403);
      // Neither the console nor the API is here.
      const page = await fetch(`${metricsUrl()}/`, { headers: { authorization: `Bearer ${secrets.admin}` } });
      expect(page.status).toBe(404);
      expect(await page.text()).toMatch(/only GET \/metrics/);
      const rpc = await fetch(`${metricsUrl()}/${SESSION_SERVICE}/GetSession`, {
        method: "POST",
        headers: { authorization: `Bearer ${secrets.admin}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(rpc.status).toBe(404);
    });

    it("shows the same server's series as the main port, moving with its traffic", async () => {
      const read = async () => {
        const res = await fetch(`${metricsUrl()}/metrics`, { headers: { authorization: `Bearer ${secrets.metrics}` } });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
        return parse(await res.text());
      };
      const before = await read();
      expect(value(before, "sessionstore_database_reachable")).toBe(1);
      const client = createSessionStoreClient(server().server.url, { token: secrets.admin });
      await client.createSession({ appName: "a", userId: "u1", sessionId: unique("s") });
      const created = (s: Sample[]) => value(s, "sessionstore_rpc_handled_total", { method: "CreateSession", code: "OK" });
      for (let i = 0; created(await read()) !== created(before) + 1; i++) {
        if (i === 200) throw new Error("CreateSession never showed on the metrics port");
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(
        value(await scrape(server(), secrets.metrics), "sessionstore_rpc_handled_total", { method: "CreateSession", code: "OK" }),
      ).toBe(created(before) + 1);
    });

    it("closes with the server", async () => {
      const url = metricsUrl();
      await server().close();
      t = undefined;
      await expect(fetch(`${url}/metrics`)).rejects.toThrow();
    });
  });
}

describe("metrics port without tokens", () => {
  const backend = backends().find((b) => b.available);
  it.skipIf(!backend)("refuses a non-loopback metrics address unless told the network is trusted, and serves loopback", async () => {
    const available = backend as NonNullable<typeof backend>;
    const database = await available.open();
    try {
      const config = { ...defaults, port: 0, metricsPort: 0, metricsHost: "0.0.0.0" };
      await expect(startServer(config, { logger: silentLogger, database })).rejects.toThrow(
        /refusing to serve metrics on 0\.0\.0\.0 without authentication/,
      );
    } finally {
      await database.close();
    }
    const open = await startTestServer(available, { metricsPort: 0 });
    try {
      const res = await fetch(`${open.server.metricsUrl}/metrics`);
      expect(res.status).toBe(200);
      expect(value(parse(await res.text()), "sessionstore_database_reachable")).toBe(1);
    } finally {
      await open.close();
    }
  });
});
