import { type Client, Code, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { beforeAll, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/ts/grpc/health/v1/health_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

// One port, every client: gRPC over HTTP/2 for services, and for browsers the
// Connect and gRPC-Web protocols over HTTP/1.1, in binary and in JSON. The
// listener picks HTTP/2 or HTTP/1.1 from each connection's first bytes, so
// these all talk to the same server at once.

type Protocol = { name: string; transport: (baseUrl: string) => Transport };

const protocols: Protocol[] = [
  { name: "gRPC over HTTP/2", transport: (baseUrl) => createGrpcTransport({ baseUrl }) },
  { name: "Connect over HTTP/2", transport: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2" }) },
  { name: "Connect over HTTP/1.1", transport: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }) },
  {
    name: "Connect JSON over HTTP/1.1",
    transport: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
  },
  { name: "gRPC-Web over HTTP/1.1", transport: (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }) },
  {
    name: "gRPC-Web JSON over HTTP/1.1",
    transport: (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
  },
];

describeContract("one port for every protocol", (t) => {
  let clients: { name: string; sessions: Client<typeof SessionService>; health: Client<typeof Health> }[];
  beforeAll(() => {
    clients = protocols.map((p) => {
      const transport = p.transport(t().server.url);
      return { name: p.name, sessions: createClient(SessionService, transport), health: createClient(Health, transport) };
    });
  });

  it("writes through each protocol and reads every write back through all of them", async () => {
    const appName = unique("app");
    for (const [i, c] of clients.entries()) {
      const created = await c.sessions.createSession({ appName, userId: "u1", sessionId: `s${i}`, state: { [`user:by${i}`]: c.name } });
      expect(created.session?.id, c.name).toBe(`s${i}`);
      await c.sessions.appendEvent({
        appName,
        userId: "u1",
        sessionId: `s${i}`,
        event: {
          author: "user",
          content: { parts: [{ data: { case: "inlineData", value: { mimeType: "x/y", data: new Uint8Array([0, 1, 255]) } } }] },
        },
      });
    }
    const expectedUserState = Object.fromEntries(clients.map((c, i) => [`by${i}`, c.name]));
    for (const c of clients) {
      expect((await c.sessions.getUserState({ appName, userId: "u1" })).state, c.name).toEqual(expectedUserState);
      for (let i = 0; i < clients.length; i++) {
        const session = (await c.sessions.getSession({ appName, userId: "u1", sessionId: `s${i}` })).session;
        expect(session?.revision, c.name).toBe(1n);
        const part = session?.events[0]?.content?.parts[0]?.data;
        expect(part?.case === "inlineData" ? part.value.data : undefined, c.name).toEqual(new Uint8Array([0, 1, 255]));
      }
    }
  });

  it("serves all protocols concurrently", async () => {
    const appName = unique("app");
    await t().client.createSession({ appName, userId: "u1", sessionId: "shared", state: { "user:k": "v" } });
    const results = await Promise.all(
      clients.flatMap((c) =>
        Array.from({ length: 5 }, async () => (await c.sessions.getSession({ appName, userId: "u1", sessionId: "shared" })).session?.state),
      ),
    );
    expect(results).toEqual(results.map(() => ({ "user:k": "v" })));
  });

  it("reports the same error code and message over each protocol", async () => {
    const appName = unique("app");
    for (const c of clients) {
      const notFound = await expectCode(c.sessions.getSession({ appName, userId: "u1", sessionId: "gone" }), Code.NotFound, /gone/);
      expect(notFound.rawMessage, c.name).toContain(appName);
      await expectCode(c.sessions.createSession({ appName: "", userId: "u1" }), Code.InvalidArgument, /app_name/);
    }
  });

  it("streams health over each protocol, HTTP/1.1 included", async () => {
    for (const c of clients) {
      const abort = new AbortController();
      for await (const res of c.health.watch({ service: "" }, { signal: abort.signal })) {
        expect(res.status, c.name).toBe(HealthCheckResponse_ServingStatus.SERVING);
        break;
      }
      abort.abort();
    }
  });

  // What a browser's fetch() sends: a plain JSON POST, no Connect headers.
  const postJson = (method: string, body: unknown) =>
    fetch(`${t().server.url}/sessionstore.v1.SessionService/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  let appName: string;
  beforeAll(async () => {
    appName = unique("app");
    const res = await postJson("CreateSession", { appName, userId: "u1", sessionId: "web", state: { "user:theme": "dark", count: 2 } });
    expect(res.status).toBe(200);
  });

  it("answers a raw fetch POST of JSON to GetUserState with JSON", async () => {
    const res = await postJson("GetUserState", { appName, userId: "u1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ state: { theme: "dark" } });
  });

  it("speaks proto3 JSON: camelCase fields, RFC 3339 times, int64 as strings, bytes as base64", async () => {
    const key = { appName, userId: "u1", sessionId: "web-json" };
    expect((await postJson("CreateSession", key)).status).toBe(200);
    const appended = await postJson("AppendEvent", {
      ...key,
      event: {
        author: "user",
        timestamp: "2030-01-02T03:04:05.123456789Z",
        content: { parts: [{ inlineData: { mimeType: "x/y", data: "AAH/" } }] },
      },
    });
    expect(appended.status).toBe(200);
    expect(await appended.json()).toMatchObject({ revision: "1", stored: true, event: { seq: "1" } });

    const res = await postJson("GetSession", key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { session: Record<string, unknown> };
    expect(body.session).toMatchObject({
      id: "web-json",
      appName,
      userId: "u1",
      state: { "user:theme": "dark" },
      revision: "1",
      lastUpdateTime: "2030-01-02T03:04:05.123456789Z",
      events: [{ seq: "1", author: "user", content: { parts: [{ inlineData: { mimeType: "x/y", data: "AAH/" } }] } }],
    });
    expect(body.session.createTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it("answers a raw fetch error as a Connect JSON error with the matching HTTP status", async () => {
    const missing = await postJson("GetSession", { appName, userId: "u1", sessionId: "nope" });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: "not_found", message: expect.stringContaining("nope") });

    const invalid = await postJson("GetUserState", { appName, userId: "" });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ code: "invalid_argument", message: expect.stringContaining("user_id") });
  });

  it("answers an unknown path with 404, a GET with 405 and a foreign content type with 415", async () => {
    const unknown = await postJson("Nope", {});
    expect(unknown.status).toBe(404);
    await unknown.body?.cancel();
    const get = await fetch(`${t().server.url}/sessionstore.v1.SessionService/GetUserState`);
    // The methods are not marked idempotent, so Connect's GET form is off.
    expect(get.status).toBe(405);
    await get.body?.cancel();
    const text = await fetch(`${t().server.url}/sessionstore.v1.SessionService/GetUserState`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(text.status).toBe(415);
    await text.body?.cancel();
  });
});
