import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { backends } from "../support/backends.js";
import { expectCode } from "../support/contract.js";
import { snapshot } from "../support/db-snapshot.js";
import { unique } from "../support/ids.js";
import { startTestServer, type TestServer } from "../support/server.js";

const policy = JSON.stringify({
  defaults: { limits: { maxEventsPerSession: 5, maxEventBytes: 2000, maxStateBytes: 300, warnRatio: 0.8 } },
});

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`size caps [${backend.name}]`, () => {
    let t: TestServer;
    const logs: Record<string, unknown>[] = [];
    beforeAll(async () => {
      const logger = createLogger("warn", (line) => logs.push(JSON.parse(line) as Record<string, unknown>));
      t = await startTestServer(backend, { policy, maxMessageBytes: 64 * 1024 }, logger);
    });
    afterAll(async () => {
      await t?.close();
    });
    const session = async () => {
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t.client.createSession(key);
      return key;
    };

    it("refuses the event past maxEventsPerSession, naming the limit, and warns at 80%", async () => {
      const key = await session();
      for (let i = 0; i < 5; i++) await t.client.appendEvent({ ...key, event: { author: "user" } });
      const before = await snapshot(t.database);
      await expectCode(t.client.appendEvent({ ...key, event: { author: "user" } }), Code.ResourceExhausted, /maxEventsPerSession = 5/);
      expect(await snapshot(t.database)).toBe(before);
      const warning = logs.find((l) => l.msg === "session is approaching a limit" && l.sessionId === "s" && l.appName === key.appName);
      expect(warning).toMatchObject({ level: "warn", userId: "u1", limit: "maxEventsPerSession", max: 5 });
    });

    it("refuses an event over maxEventBytes and writes nothing", async () => {
      const key = await session();
      const before = await snapshot(t.database);
      await expectCode(
        t.client.appendEvent({
          ...key,
          event: { author: "user", content: { parts: [{ data: { case: "text", value: "x".repeat(3000) } }] } },
        }),
        Code.ResourceExhausted,
        /maxEventBytes = 2000/,
      );
      expect(await snapshot(t.database)).toBe(before);
    });

    it("refuses a delta that would grow any state scope past maxStateBytes, and keeps the old state", async () => {
      const key = await session();
      await t.client.appendEvent({ ...key, event: { author: "user", actions: { stateDelta: { a: "x".repeat(100) } } } });
      const before = await snapshot(t.database);
      for (const k of ["b", "user:b", "app:b"]) {
        await expectCode(
          t.client.appendEvent({ ...key, event: { author: "user", actions: { stateDelta: { [k]: "y".repeat(300) } } } }),
          Code.ResourceExhausted,
          /maxStateBytes = 300/,
        );
      }
      expect(await snapshot(t.database)).toBe(before);
      // Replacing a value with a smaller one is always allowed.
      await t.client.appendEvent({ ...key, event: { author: "user", actions: { stateDelta: { a: "short" } } } });
      expect((await t.client.getSession(key)).session?.state).toEqual({ a: "short" });
    });

    it("refuses a session whose initial state is too large, and creates nothing", async () => {
      const appName = unique("app");
      const before = await snapshot(t.database);
      await expectCode(
        t.client.createSession({ appName, userId: "u1", state: { big: "z".repeat(400) } }),
        Code.ResourceExhausted,
        /maxStateBytes/,
      );
      await expectCode(
        t.client.createSession({ appName, userId: "u1", state: { "user:big": "z".repeat(400) } }),
        Code.ResourceExhausted,
        /maxStateBytes/,
      );
      expect(await snapshot(t.database)).toBe(before);
    });

    it("refuses a request over the message size limit with RESOURCE_EXHAUSTED", async () => {
      const key = await session();
      const err = await expectCode(
        t.client.appendEvent({
          ...key,
          event: { author: "user", content: { parts: [{ data: { case: "text", value: "x".repeat(70 * 1024) } }] } },
        }),
        Code.ResourceExhausted,
      );
      expect(err.rawMessage).toMatch(/65536/);
    });
  });
}
