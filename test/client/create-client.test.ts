import { createServer, type Socket } from "node:net";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createSessionStoreClient, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_TIMEOUT_MS } from "../../src/client/create-client.js";
import { baseUrlOf } from "../../src/client/target.js";
import { defaults } from "../../src/config/config.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

describeContract("createSessionStoreClient", (t) => {
  for (const protocol of ["grpc", "connect", "grpc-web"] as const) {
    it(`works over ${protocol}`, async () => {
      const client = createSessionStoreClient(t().server.url, { protocol, timeoutMs: 5000 });
      const appName = unique("app");
      const created = await client.createSession({ appName, userId: "u1", state: { "user:lang": "fr" } });
      const key = { appName, userId: "u1", sessionId: created.session?.id as string };
      await client.appendEvent({ ...key, event: { author: "user", content: { parts: [{ data: { case: "text", value: "hi" } }] } } });
      const got = await client.getSession({ ...key, numRecentEvents: 1 });
      expect(got.session?.events[0]?.content?.parts[0]?.data).toEqual({ case: "text", value: "hi" });
      expect((await client.getUserState(key)).state).toEqual({ lang: "fr" });
    });
  }

  it("takes host:port as well as the URL the server logs", async () => {
    const appName = unique("app");
    for (const target of [t().server.url, `127.0.0.1:${t().server.port}`, `localhost:${t().server.port}`]) {
      const client = createSessionStoreClient(target);
      expect((await client.getUserState({ appName, userId: "u1" })).state).toEqual({});
    }
  });

  it("refuses answers over maxMessageBytes, which defaults to the server's limit", async () => {
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(defaults.maxMessageBytes);
    const appName = unique("app");
    const created = await t().client.createSession({ appName, userId: "u1" });
    const key = { appName, userId: "u1", sessionId: created.session?.id as string };
    await t().client.appendEvent({
      ...key,
      event: { author: "user", content: { parts: [{ data: { case: "text", value: "x".repeat(300_000) } }] } },
    });
    const small = createSessionStoreClient(t().server.url, { maxMessageBytes: 100_000 });
    await expectCode(small.getSession(key), Code.ResourceExhausted);
    expect((await createSessionStoreClient(t().server.url).getSession(key)).session?.events).toHaveLength(1);
  });

  it("asks for gzip answers only when told to", async () => {
    const appName = unique("app");
    const created = await t().client.createSession({ appName, userId: "u1" });
    const key = { appName, userId: "u1", sessionId: created.session?.id as string };
    const text = "x".repeat(20_000);
    await t().client.appendEvent({ ...key, event: { author: "user", content: { parts: [{ data: { case: "text", value: text } }] } } });
    for (const gzip of [false, true]) {
      const seen: { asked: string | null; got: string | null }[] = [];
      const client = createSessionStoreClient(t().server.url, {
        gzip,
        interceptors: [
          (next) => async (req) => {
            const res = await next(req);
            seen.push({ asked: req.header.get("grpc-accept-encoding"), got: res.header.get("grpc-encoding") });
            return res;
          },
        ],
      });
      const got = await client.getSession(key);
      expect(got.session?.events[0]?.content?.parts[0]?.data).toEqual({ case: "text", value: text });
      expect(seen).toHaveLength(1);
      if (gzip) {
        expect(seen[0]?.asked).toContain("gzip");
        expect(seen[0]?.got).toBe("gzip");
      } else {
        expect(seen[0]?.asked ?? "").not.toContain("gzip");
        expect(seen[0]?.got ?? "identity").toBe("identity");
      }
    }
  });

  it("gives unary calls the default deadline and tails none", async () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    const client = createSessionStoreClient(t().server.url, { timeoutMs: 100 });
    const appName = unique("app");
    const created = await client.createSession({ appName, userId: "u1" });
    // Heartbeats every 150 ms: the third comes long after a 100 ms deadline would have ended the tail.
    let heartbeats = 0;
    for await (const res of client.streamEvents({
      appName,
      userId: "u1",
      sessionId: created.session?.id as string,
      heartbeatInterval: { nanos: 150_000_000 },
    })) {
      if (res.kind.case === "heartbeat" && ++heartbeats === 3) break;
    }
    expect(heartbeats).toBe(3);
  });
});

describe("createSessionStoreClient targets", () => {
  it("maps every target form to a base URL", () => {
    expect(baseUrlOf("http://127.0.0.1:50051")).toBe("http://127.0.0.1:50051");
    expect(baseUrlOf("https://store.example.com")).toBe("https://store.example.com");
    expect(baseUrlOf("127.0.0.1:50051")).toBe("http://127.0.0.1:50051");
    expect(baseUrlOf("localhost:1")).toBe("http://localhost:1");
    expect(baseUrlOf("[::1]:7")).toBe("http://[::1]:7");
    expect(baseUrlOf("dns:///localhost:7")).toBe("http://localhost:7");
    expect(baseUrlOf("store.internal:50051")).toBe("https://store.internal:50051");
    expect(baseUrlOf("10.0.0.1:50051")).toBe("https://10.0.0.1:50051");
    for (const bad of ["", "store.internal", "unix:///tmp/s.sock", "http://"]) expect(() => baseUrlOf(bad)).toThrow(/target/);
  });

  it("ends a unary call at the default deadline", async () => {
    // A listener that never speaks HTTP/2: only the deadline ends the call.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const client = createSessionStoreClient(`127.0.0.1:${port}`, { timeoutMs: 200 });
      await expectCode(client.getUserState({ appName: "a", userId: "u1" }), Code.DeadlineExceeded);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
