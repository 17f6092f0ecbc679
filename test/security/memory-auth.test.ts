import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContentSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { hashToken, newToken } from "../../src/auth/tokens.js";
import { createMemoryClient, createSessionStoreClient, type MemoryClient } from "../../src/client/create-client.js";
import { backends } from "../support/backends.js";
import { snapshot } from "../support/db-snapshot.js";
import { startTestServer, type TestServer } from "../support/server.js";

const APP = "app-a";
const OWNER = "alice";
const SESSION = "s1";

const secrets = { admin: newToken(), alice: newToken(), bob: newToken(), reader: newToken(), otherApp: newToken() };
const tokenConfig = JSON.stringify({
  tokens: [
    { name: "admin", sha256: hashToken(secrets.admin), apps: [APP] },
    { name: "alice", sha256: hashToken(secrets.alice), apps: [APP], user: OWNER },
    { name: "bob", sha256: hashToken(secrets.bob), apps: [APP], user: "bob" },
    { name: "reader", sha256: hashToken(secrets.reader), apps: [APP], readOnly: true },
    { name: "other", sha256: hashToken(secrets.otherApp), apps: ["app-b"] },
  ],
});

const content = create(ContentSchema, { parts: [{ data: { case: "text", value: "alice likes jazz" } }] });

/**
 * A valid request for every MemoryService RPC, aimed at alice in APP.
 * Walking the descriptor means a new RPC fails here until it has a request,
 * and so until someone decided who may call it.
 */
const requests: Record<string, () => Record<string, unknown>> = {
  AddSessionToMemory: () => ({ appName: APP, userId: OWNER, sessionId: SESSION }),
  AddEventsToMemory: () => ({ appName: APP, userId: OWNER, events: [{ id: "e9", author: "user", content }] }),
  AddMemories: () => ({ appName: APP, userId: OWNER, memories: [{ id: "m2", content }] }),
  SearchMemory: () => ({ appName: APP, userId: OWNER, query: "jazz" }),
  ListMemories: () => ({ appName: APP, userId: OWNER }),
  GetMemory: () => ({ appName: APP, userId: OWNER, memoryId: "m1" }),
  DeleteMemory: () => ({ appName: APP, userId: OWNER, memoryId: "m1" }),
  DeleteSessionMemories: () => ({ appName: APP, userId: OWNER, sessionId: SESSION }),
};
const WRITES = new Set(["AddSessionToMemory", "AddEventsToMemory", "AddMemories", "DeleteMemory", "DeleteSessionMemories"]);

async function codeOf(promise: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await promise;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`MemoryService authorization [${backend.name}]`, () => {
    let t: TestServer;
    const as = (token?: string): MemoryClient => createMemoryClient(t.server.url, token ? { token } : {});
    const call = (client: MemoryClient, name: string) => {
      const method = MemoryService.methods.find((m) => m.name === name);
      const build = requests[name];
      if (!method || !build) throw new Error(`no request for ${name}`);
      const fn = (client as unknown as Record<string, (req: unknown) => Promise<unknown>>)[method.localName];
      if (!fn) throw new Error(`client has no ${method.localName}`);
      return fn(build());
    };

    beforeAll(async () => {
      t = await startTestServer(backend, { tokens: tokenConfig });
    });
    afterAll(async () => {
      await t?.close();
    });

    const seed = async () => {
      const sessions = createSessionStoreClient(t.server.url, { token: secrets.admin });
      await sessions.eraseUserData({ appName: APP, userId: OWNER });
      await sessions.createSession({ appName: APP, userId: OWNER, sessionId: SESSION });
      await sessions.appendEvent({ appName: APP, userId: OWNER, sessionId: SESSION, event: { id: "e1", author: "user", content } });
      await as(secrets.admin).addMemories({ appName: APP, userId: OWNER, memories: [{ id: "m1", content }] });
    };

    it("covers every RPC of the service with a request", () => {
      const missing = MemoryService.methods.filter((m) => !(m.name in requests)).map((m) => m.name);
      expect(missing, "add a request (and decide the rule in src/auth/authorize.ts)").toEqual([]);
    });

    for (const method of MemoryService.methods) {
      it(`${method.name}: refuses no token, a wrong-app, a wrong-user and a read-only token (for writes), and changes nothing`, async () => {
        await seed();
        const before = await snapshot(t.database);
        expect(await codeOf(call(as(), method.name))).toBe(Code.Unauthenticated);
        expect(await codeOf(call(as("sst_not-a-real-token"), method.name))).toBe(Code.Unauthenticated);
        expect(await codeOf(call(as(secrets.otherApp), method.name))).toBe(Code.PermissionDenied);
        expect(await codeOf(call(as(secrets.bob), method.name))).toBe(Code.PermissionDenied);
        expect(await codeOf(call(as(secrets.reader), method.name))).toBe(WRITES.has(method.name) ? Code.PermissionDenied : "ok");
        expect(await snapshot(t.database)).toBe(before);
        await seed();
        expect(await codeOf(call(as(secrets.alice), method.name))).toBe("ok");
        await seed();
        expect(await codeOf(call(as(secrets.admin), method.name))).toBe("ok");
      });
    }
  });
}
