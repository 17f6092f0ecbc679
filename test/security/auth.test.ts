import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { hashToken, loadTokens, newToken, TokenConfigError } from "../../src/auth/tokens.js";
import { createSessionStoreClient, type SessionStoreClient } from "../../src/client/create-client.js";
import { defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { startServer } from "../../src/server/server.js";
import { backends } from "../support/backends.js";
import { snapshot } from "../support/db-snapshot.js";
import { startTestServer, type TestServer } from "../support/server.js";

const APP = "app-a";
const OWNER = "alice";
const SESSION = "s1";

// One token per role, and the configuration holding only their hashes.
const secrets = {
  admin: newToken(),
  alice: newToken(),
  bob: newToken(),
  reader: newToken(),
  otherApp: newToken(),
};
const tokenConfig = JSON.stringify({
  tokens: [
    { name: "admin", sha256: hashToken(secrets.admin), apps: [APP] },
    { name: "alice", sha256: hashToken(secrets.alice), apps: [APP], user: OWNER },
    { name: "bob", sha256: hashToken(secrets.bob), apps: [APP], user: "bob" },
    { name: "reader", sha256: hashToken(secrets.reader), apps: [APP], readOnly: true },
    { name: "other", sha256: hashToken(secrets.otherApp), apps: ["app-b"] },
  ],
});

/**
 * A valid request for every RPC, aimed at alice's session in APP. Walking the
 * service descriptor below means a new RPC fails this test until it gets a
 * request here, and so until someone has decided who may call it.
 */
const requests: Record<string, () => Record<string, unknown>> = {
  CreateSession: () => ({ appName: APP, userId: OWNER, sessionId: "new", state: { k: 1 } }),
  GetSession: () => ({ appName: APP, userId: OWNER, sessionId: SESSION }),
  ListSessions: () => ({ appName: APP, userId: OWNER }),
  DeleteSession: () => ({ appName: APP, userId: OWNER, sessionId: SESSION }),
  AppendEvent: () => ({ appName: APP, userId: OWNER, sessionId: SESSION, event: { author: "user", actions: { stateDelta: { x: 2 } } } }),
  ListEvents: () => ({ appName: APP, userId: OWNER, sessionId: SESSION }),
  GetUserState: () => ({ appName: APP, userId: OWNER }),
  StreamEvents: () => ({ appName: APP, userId: OWNER, sessionId: SESSION }),
  EraseUserData: () => ({ appName: APP, userId: OWNER }),
  ForkSession: () => ({ appName: APP, userId: OWNER, sessionId: SESSION, newSessionId: "fork" }),
  RewindSession: () => ({ appName: APP, userId: OWNER, sessionId: SESSION, rewindBeforeInvocationId: "inv-1" }),
};

const WRITES = new Set(["CreateSession", "DeleteSession", "AppendEvent", "EraseUserData", "ForkSession", "RewindSession"]);

/** Calls any method of the service; a stream counts as answered at its first message. */
async function call(client: SessionStoreClient, method: DescMethod, request: Record<string, unknown>): Promise<void> {
  const fn = (client as unknown as Record<string, (req: unknown, opts?: unknown) => unknown>)[method.localName];
  if (!fn) throw new Error(`client has no ${method.localName}`);
  if (method.methodKind === "server_streaming") {
    const controller = new AbortController();
    for await (const _ of fn(request, { signal: controller.signal }) as AsyncIterable<unknown>) {
      controller.abort();
      break;
    }
    return;
  }
  await fn(request);
}

async function codeOf(promise: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await promise;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`authentication and authorization [${backend.name}]`, () => {
    let t: TestServer;
    const as = (token?: string) => createSessionStoreClient(t.server.url, token ? { token } : {});

    beforeAll(async () => {
      t = await startTestServer(backend, { tokens: tokenConfig });
    });
    afterAll(async () => {
      await t?.close();
    });

    const seed = async () => {
      const admin = as(secrets.admin);
      await admin.eraseUserData({ appName: APP, userId: OWNER });
      await admin.createSession({ appName: APP, userId: OWNER, sessionId: SESSION, state: { "user:pref": "x", "app:motd": "hi" } });
      await admin.appendEvent({ appName: APP, userId: OWNER, sessionId: SESSION, event: { author: "user", invocationId: "inv-1" } });
    };

    it("covers every RPC of the service with a request", () => {
      const missing = SessionService.methods.filter((m) => !(m.name in requests)).map((m) => m.name);
      expect(missing, "add a request (and decide the rule in src/auth/authorize.ts)").toEqual([]);
    });

    for (const method of SessionService.methods) {
      it(`${method.name}: refuses no token, a wrong-app, a wrong-user and a read-only token, and changes nothing`, async () => {
        await seed();
        const before = await snapshot(t.database);
        const build = requests[method.name];
        if (!build) throw new Error(`no request for ${method.name}`);
        expect(await codeOf(call(as(), method, build()))).toBe(Code.Unauthenticated);
        expect(await codeOf(call(as("sst_not-a-real-token"), method, build()))).toBe(Code.Unauthenticated);
        expect(await codeOf(call(as(secrets.otherApp), method, build()))).toBe(Code.PermissionDenied);
        expect(await codeOf(call(as(secrets.bob), method, build()))).toBe(Code.PermissionDenied);
        expect(await codeOf(call(as(secrets.reader), method, build()))).toBe(WRITES.has(method.name) ? Code.PermissionDenied : "ok");
        expect(await snapshot(t.database)).toBe(before);
        // The request itself is fine: the owner's token and an app token may make it.
        await seed();
        expect(await codeOf(call(as(secrets.alice), method, build()))).toBe("ok");
        await seed();
        expect(await codeOf(call(as(secrets.admin), method, build()))).toBe("ok");
      });
    }

    it("lets only a token for the whole app write app: state", async () => {
      await seed();
      const before = await snapshot(t.database);
      const alice = as(secrets.alice);
      const denied = await codeOf(
        alice.appendEvent({
          appName: APP,
          userId: OWNER,
          sessionId: SESSION,
          event: { author: "agent", actions: { stateDelta: { "app:flag": true } } },
        }),
      );
      expect(denied).toBe(Code.PermissionDenied);
      expect(await codeOf(alice.createSession({ appName: APP, userId: OWNER, state: { "app:flag": true } }))).toBe(Code.PermissionDenied);
      expect(await snapshot(t.database)).toBe(before);
      await as(secrets.admin).appendEvent({
        appName: APP,
        userId: OWNER,
        sessionId: SESSION,
        event: { author: "agent", actions: { stateDelta: { "app:flag": true } } },
      });
      expect((await alice.getSession({ appName: APP, userId: OWNER, sessionId: SESSION })).session?.state?.["app:flag"]).toBe(true);
    });

    it("keeps a user-scoped token to its user, also for listings and tails across users", async () => {
      await seed();
      const alice = as(secrets.alice);
      expect(await codeOf(alice.listSessions({ appName: APP }))).toBe(Code.PermissionDenied);
      expect(await codeOf(call(alice, SessionService.method.streamEvents, { appName: APP }))).toBe(Code.PermissionDenied);
      expect((await alice.listSessions({ appName: APP, userId: OWNER })).sessions.map((s) => s.id)).toEqual([SESSION]);
      // Same answer whether or not the other user's session exists: the decision reads no data.
      const err = ConnectError.from(await alice.getSession({ appName: APP, userId: "bob", sessionId: "nope" }).catch((e: unknown) => e));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(err.rawMessage).not.toContain("nope");
    });

    it("serves health and reflection without a token, for load balancers and tooling", async () => {
      const res = await fetch(`${t.server.url}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(200);
    });
  });
}

describe("token configuration and open mode", () => {
  it("stores only hashes: a plaintext token in the configuration is refused", () => {
    expect(() => loadTokens(JSON.stringify([{ token: "secret", apps: ["a"] }]), undefined)).toThrow(TokenConfigError);
    expect(() => loadTokens(JSON.stringify([{ sha256: "abc", apps: ["a"] }]), undefined)).toThrow(/64 lowercase hex/);
    expect(() => loadTokens(JSON.stringify([{ sha256: hashToken("x"), apps: [] }]), undefined)).toThrow(/apps/);
    const store = loadTokens(JSON.stringify([{ sha256: hashToken("x"), apps: "*", readOnly: true }]), undefined);
    expect(store.lookup("x")?.readOnly).toBe(true);
    expect(store.lookup("y")).toBeUndefined();
  });

  it("refuses to listen beyond loopback without tokens unless told the network is trusted", async () => {
    const config = { ...defaults, host: "0.0.0.0", port: 0, dataDir: "memory://" };
    await expect(startServer(config, { logger: silentLogger })).rejects.toThrow(/without authentication/);
    const lines: string[] = [];
    const logger = { ...silentLogger, warn: (msg: string) => lines.push(msg) };
    const server = await startServer({ ...config, insecureNoAuth: true }, { logger });
    try {
      expect(lines.some((l) => l.includes("no tokens configured"))).toBe(true);
    } finally {
      await server.close();
    }
  });
});
