import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckpointService } from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { hashToken, newToken } from "../../src/auth/tokens.js";
import { createTransport } from "../../src/client/create-client.js";
import { backends } from "../support/backends.js";
import { startTestServer, type TestServer } from "../support/server.js";

// CheckpointService under the same tokens as sessions: app, user and
// read-only scopes, decided from the request alone.

const APP = "app-a";
const OWNER = "alice";
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

const typed = { type: "json", data: new TextEncoder().encode("{}") };
const at = { appName: APP, userId: OWNER };
/** A valid request for every RPC; a new RPC fails the coverage test until it has one (and a rule). */
const requests: Record<string, () => Record<string, unknown>> = {
  PutCheckpoint: () => ({ ...at, threadId: "t", checkpointId: "2", body: typed, metadata: typed, metadataJson: "{}" }),
  PutWrites: () => ({ ...at, threadId: "t", checkpointId: "1", taskId: "k", writes: [{ channel: "c", value: typed, idx: 0 }] }),
  GetCheckpoint: () => ({ ...at, threadId: "t" }),
  ListCheckpoints: () => ({ ...at }),
  DeleteThread: () => ({ ...at, threadId: "t" }),
  CopyThread: () => ({ ...at, sourceThreadId: "t", targetThreadId: "u" }),
  DeleteRuns: () => ({ ...at, runIds: ["r"] }),
  PruneThreads: () => ({ ...at, threadIds: ["t"], strategy: 2 }),
};
const READS = new Set(["GetCheckpoint", "ListCheckpoints"]);

async function codeOf(promise: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await promise;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

async function stored(t: TestServer): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    SELECT concat_ws('|',
      (SELECT coalesce(string_agg(concat_ws(',', app_name, user_id, thread_id), ';' ORDER BY pk), '') FROM checkpoint_threads),
      (SELECT coalesce(string_agg(concat_ws(',', thread_pk, checkpoint_ns, checkpoint_id, parent_checkpoint_id), ';' ORDER BY 1), '') FROM checkpoints),
      (SELECT coalesce(string_agg(concat_ws(',', thread_pk, checkpoint_id, task_id, idx), ';' ORDER BY 1), '') FROM checkpoint_writes)
    ) AS s`.execute(t.database.db);
  return rows[0]?.s ?? "";
}

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`CheckpointService authorization [${backend.name}]`, () => {
    let t: TestServer;
    const as = (token?: string) => createClient(CheckpointService, createTransport(t.server.url, token ? { token } : {}));
    const call = (token: string | undefined, method: DescMethod, req: Record<string, unknown>) => {
      const fn = (as(token) as unknown as Record<string, (r: unknown) => Promise<unknown>>)[method.localName];
      if (!fn) throw new Error(`client has no ${method.localName}`);
      return fn(req);
    };
    const seed = async () => {
      const admin = as(secrets.admin);
      await admin.pruneThreads({ ...at, threadIds: ["t", "u"], strategy: 2 });
      await admin.putCheckpoint({ ...at, threadId: "t", checkpointId: "1", body: typed, metadata: typed, metadataJson: '{"run_id":"r"}' });
    };

    beforeAll(async () => {
      t = await startTestServer(backend, { tokens: tokenConfig });
    });
    afterAll(async () => {
      await t?.close();
    });

    it("covers every RPC of the service with a request", () => {
      expect(CheckpointService.methods.filter((m) => !(m.name in requests)).map((m) => m.name)).toEqual([]);
    });

    for (const method of CheckpointService.methods) {
      it(`${method.name}: refuses no token, a wrong-app, a wrong-user and (for writes) a read-only token, and changes nothing`, async () => {
        await seed();
        const before = await stored(t);
        const build = requests[method.name];
        if (!build) throw new Error(`no request for ${method.name}`);
        expect(await codeOf(call(undefined, method, build()))).toBe(Code.Unauthenticated);
        expect(await codeOf(call(secrets.otherApp, method, build()))).toBe(Code.PermissionDenied);
        expect(await codeOf(call(secrets.bob, method, build()))).toBe(Code.PermissionDenied);
        expect(await codeOf(call(secrets.reader, method, build()))).toBe(READS.has(method.name) ? "ok" : Code.PermissionDenied);
        expect(await stored(t)).toBe(before);
        await seed();
        expect(await codeOf(call(secrets.alice, method, build()))).toBe("ok");
        await seed();
        expect(await codeOf(call(secrets.admin, method, build()))).toBe("ok");
      });
    }
  });
}
