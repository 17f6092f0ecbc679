import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleService } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { hashToken } from "../../src/auth/tokens.js";
import { backends } from "../support/backends.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { startTestServer, type TestServer } from "../support/server.js";

describeContract("the console's service and listings", (t) => {
  it("answers WhoAmI with full access when the server has no tokens", async () => {
    const me = await t().clientFor(ConsoleService).whoAmI({});
    expect(me).toMatchObject({ authRequired: false, allApps: true, readOnly: false, userId: "", apps: [] });
  });

  it("lists app names in order, paged, one probe per app", async () => {
    const prefix = unique("apps");
    const names = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
    for (const appName of names) {
      await t().client.createSession({ appName, userId: "u1" });
      await t().client.createSession({ appName, userId: "u2" });
    }
    const api = t().clientFor(ConsoleService);
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await api.listApps({ pageSize: 2, pageToken });
      expect(page.appNames.length).toBeLessThanOrEqual(2);
      seen.push(...page.appNames);
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((n) => n.startsWith(prefix))).toEqual([...names].sort());
    await expectCode(api.listApps({ pageToken: "nonsense" }), Code.InvalidArgument, /page_token/);
  });

  it("finds a session by id across users, and lists sessions newest first", async () => {
    const appName = unique("app");
    for (const userId of ["carol", "alice", "bob"]) await t().client.createSession({ appName, userId, sessionId: "shared-id" });
    await t().client.createSession({ appName, userId: "alice", sessionId: "other" });
    const found = await t().clientFor(ConsoleService).findSessions({ appName, sessionId: "shared-id" });
    expect(found.sessions.map((s) => s.userId)).toEqual(["alice", "bob", "carol"]);
    expect((await t().clientFor(ConsoleService).findSessions({ appName, sessionId: "nope" })).sessions).toEqual([]);
    await expectCode(t().clientFor(ConsoleService).findSessions({ appName, sessionId: "" }), Code.InvalidArgument, /session_id/);

    // Touch one so that it is the most recent.
    await t().client.appendEvent({ appName, userId: "bob", sessionId: "shared-id", event: { author: "user" } });
    const oldestFirst = await t().client.listSessions({ appName });
    const newest: string[] = [];
    let pageToken = "";
    do {
      const page = await t().client.listSessions({ appName, newestFirst: true, pageSize: 1, pageToken });
      newest.push(...page.sessions.map((s) => `${s.userId}/${s.id}`));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(newest).toEqual(oldestFirst.sessions.map((s) => `${s.userId}/${s.id}`).reverse());
    expect(newest[0]).toBe("bob/shared-id");
    // A token of one order is not valid for the other.
    const first = await t().client.listSessions({ appName, pageSize: 1 });
    await expectCode(t().client.listSessions({ appName, newestFirst: true, pageToken: first.nextPageToken }), Code.InvalidArgument);
  });
});

const secrets = { admin: "admin-secret", reader: "reader-secret", alice: "alice-secret" };

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`the console's service with tokens [${backend.name}]`, () => {
    let t: TestServer;
    const app = unique("app");
    const clients = (token: string | undefined) => {
      const transport = createGrpcTransport({
        baseUrl: t.server.url,
        interceptors: [
          (next) => (req) => {
            if (token) req.header.set("authorization", `Bearer ${token}`);
            return next(req);
          },
        ],
      });
      return { console: createClient(ConsoleService, transport), store: createClient(SessionService, transport) };
    };
    beforeAll(async () => {
      t = await startTestServer(backend, {
        tokens: JSON.stringify([
          { name: "admin", sha256: hashToken(secrets.admin), apps: [app, "zeta"] },
          { name: "reader", sha256: hashToken(secrets.reader), apps: [app], readOnly: true },
          { name: "alice", sha256: hashToken(secrets.alice), apps: [app], user: "alice" },
        ]),
      });
      const admin = clients(secrets.admin).store;
      await admin.createSession({ appName: app, userId: "alice", sessionId: "s" });
      await admin.createSession({ appName: app, userId: "bob", sessionId: "s" });
      await admin.createSession({ appName: "zeta", userId: "bob", sessionId: "z" });
    });
    afterAll(async () => {
      await t?.close();
    });

    it("tells each token what it grants, and refuses a missing or unknown token", async () => {
      expect(await clients(secrets.reader).console.whoAmI({})).toMatchObject({
        authRequired: true,
        tokenName: "reader",
        allApps: false,
        apps: [app],
        readOnly: true,
        userId: "",
      });
      expect(await clients(secrets.alice).console.whoAmI({})).toMatchObject({ tokenName: "alice", userId: "alice", readOnly: false });
      await expectCode(clients(undefined).console.whoAmI({}), Code.Unauthenticated, /missing credentials/);
      await expectCode(clients("wrong").console.whoAmI({}), Code.Unauthenticated, /unknown or revoked token/);
    });

    it("lists only the token's apps and finds only within its grant", async () => {
      expect((await clients(secrets.admin).console.listApps({})).appNames).toEqual([app, "zeta"].sort());
      expect((await clients(secrets.reader).console.listApps({})).appNames).toEqual([app]);
      await expectCode(clients(secrets.reader).console.findSessions({ appName: "zeta", sessionId: "z" }), Code.PermissionDenied, /zeta/);
      const all = await clients(secrets.reader).console.findSessions({ appName: app, sessionId: "s" });
      expect(all.sessions.map((s) => s.userId)).toEqual(["alice", "bob"]);
      const own = await clients(secrets.alice).console.findSessions({ appName: app, sessionId: "s" });
      expect(own.sessions.map((s) => s.userId)).toEqual(["alice"]);
    });
  });
}
