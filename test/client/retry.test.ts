import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionStoreClient } from "../../src/client/create-client.js";
import type { RetryPolicy } from "../../src/client/retry.js";
import { defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { startServer } from "../../src/server/server.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import { backends } from "../support/backends.js";
import { describeContract, expectCode } from "../support/contract.js";
import { FaultProxy } from "../support/fault-proxy.js";
import { unique } from "../support/ids.js";

/** Records the client's retries; `first` settles at the first one. */
function retries(policy: RetryPolicy = {}) {
  const methods: string[] = [];
  let seen: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    seen = resolve;
  });
  // Quick and patient: the server may take a while to come back on a busy
  // machine; the call's deadline still bounds the whole thing.
  const retry: RetryPolicy = {
    maxAttempts: 1_000_000,
    initialBackoffMs: 20,
    maxBackoffMs: 250,
    ...policy,
    onRetry: ({ method }) => {
      methods.push(method);
      seen();
    },
  };
  return { methods, first, retry };
}

const config = { ...defaults, host: "127.0.0.1", port: 0, shutdownGraceMs: 1000 };

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`retries across a server restart [${backend.name}]`, () => {
    let database: OpenDatabase;
    beforeAll(async () => {
      database = await backend.open();
    });
    afterAll(async () => {
      await database?.close();
    });

    it("retries an append while the server is down and stores it once when it is back on the same port", async () => {
      const first = await startServer(config, { logger: silentLogger, database });
      const { methods, first: retried, retry } = retries();
      const client = createSessionStoreClient(first.url, { retry, timeoutMs: 120_000 });
      const appName = unique("app");
      const session = (await client.createSession({ appName, userId: "u1" })).session;
      const key = { appName, userId: "u1", sessionId: session?.id ?? "" };
      await first.close();

      const append = client.appendEvent({ ...key, event: { author: "user" }, expectedRevision: 0n });
      await retried; // the first try failed: nothing listens on the port
      const second = await startServer({ ...config, port: first.port }, { logger: silentLogger, database });
      try {
        const res = await append;
        expect(res).toMatchObject({ stored: true, duplicate: false, revision: 1n });
        expect(res.event?.id).toMatch(/^[0-9a-f-]{36}$/);
        const stored = (await client.getSession(key)).session?.events.map((e) => e.id);
        expect(stored).toEqual([res.event?.id]);
        expect(methods[0]).toBe("AppendEvent");
      } finally {
        await second.close();
      }
    });
  });
}

describeContract("client retries", (t) => {
  it("stores an append whose answer was lost once, and answers the retry with the stored event", async () => {
    const proxy = await FaultProxy.start(t().server.port);
    try {
      const { methods, retry } = retries();
      const client = createSessionStoreClient(proxy.target, { retry });
      const appName = unique("app");
      const created = await t().client.createSession({ appName, userId: "u1" });
      const key = { appName, userId: "u1", sessionId: created.session?.id ?? "" };
      await client.getUserState({ appName, userId: "u1" }); // connected through the proxy
      proxy.holdAnswers();
      const request = { ...key, event: { author: "user" }, expectedRevision: 0n };
      const append = client.appendEvent(request);
      while ((await t().client.getSession(key)).session?.revision !== 1n) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proxy.cut(); // the answer is lost; the client sees UNAVAILABLE and retries
      const res = await append;
      expect(res).toMatchObject({ duplicate: true, event: { seq: 1n } });
      expect(request.event).toEqual({ author: "user" });
      expect(methods.length).toBeGreaterThan(0);
      expect(new Set(methods)).toEqual(new Set(["AppendEvent"]));
      expect((await t().client.getSession(key)).session?.events.map((e) => e.id)).toEqual([res.event?.id]);
    } finally {
      await proxy.close();
    }
  });

  it("gives an event without an id one before the first try and keeps a given id", async () => {
    const client = createSessionStoreClient(t().server.url);
    const appName = unique("app");
    const created = await client.createSession({ appName, userId: "u1" });
    const key = { appName, userId: "u1", sessionId: created.session?.id ?? "" };
    expect((await client.appendEvent({ ...key, event: { author: "user" } })).event?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await client.appendEvent({ ...key, event: { id: "mine", author: "user" } })).event?.id).toBe("mine");
  });
});

describe("client retries without a server", () => {
  // Nothing listens on port 1.
  it("never retries CreateSession, and retries reads up to maxAttempts tries", async () => {
    const { methods, retry } = retries({ maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 2 });
    const client = createSessionStoreClient("127.0.0.1:1", { retry });
    await expectCode(client.createSession({ appName: "a", userId: "u1" }), Code.Unavailable);
    expect(methods).toEqual([]);
    await expectCode(client.getUserState({ appName: "a", userId: "u1" }), Code.Unavailable);
    expect(methods).toEqual(["GetUserState", "GetUserState"]);
  });

  it("stops retrying at the call's deadline", async () => {
    const client = createSessionStoreClient("127.0.0.1:1", { retry: retries().retry, timeoutMs: 300 });
    const err = await client.getUserState({ appName: "a", userId: "u1" }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect([Code.Unavailable, Code.DeadlineExceeded]).toContain((err as ConnectError).code);
  });
});
