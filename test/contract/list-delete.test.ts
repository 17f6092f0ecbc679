import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import type { Session } from "../../gen/ts/sessionstore/v1/session_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

describeContract("ListSessions, DeleteSession, GetUserState", (t) => {
  const listAll = async (req: { appName: string; userId?: string; pageSize?: number }): Promise<{ sessions: Session[]; pages: number }> => {
    const sessions: Session[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const res = await t().client.listSessions({ ...req, pageToken });
      sessions.push(...res.sessions);
      pageToken = res.nextPageToken;
      pages++;
    } while (pageToken !== "");
    return { sessions, pages };
  };

  it("lists sessions without events, with merged state, ordered by last update time then id", async () => {
    const appName = unique("app");
    await t().client.createSession({ appName, userId: "u1", sessionId: "b", state: { k: "b" } });
    await t().client.createSession({ appName, userId: "u1", sessionId: "a", state: { k: "a", "app:x": 1, "user:y": 2 } });
    await t().client.createSession({ appName, userId: "u1", sessionId: "c" });
    // Appending to "b" moves it to the end.
    await t().client.appendEvent({ appName, userId: "u1", sessionId: "b", event: { author: "user" } });
    const { sessions } = await listAll({ appName, userId: "u1" });
    expect(sessions.map((s) => s.id)).toEqual(["a", "c", "b"]);
    for (const s of sessions) expect(s.events).toEqual([]);
    expect(sessions.find((s) => s.id === "b")?.state).toEqual({ k: "b", "app:x": 1, "user:y": 2 });
    expect(sessions.find((s) => s.id === "b")?.revision).toBe(1n);
  });

  it("breaks ties in update time by id", async () => {
    const appName = unique("app");
    const ts = { seconds: 1_900_000_000n, nanos: 0 };
    for (const id of ["z", "m", "a"]) {
      await t().client.createSession({ appName, userId: "u1", sessionId: id });
      await t().client.appendEvent({ appName, userId: "u1", sessionId: id, event: { author: "user", timestamp: ts } });
    }
    expect((await listAll({ appName, userId: "u1" })).sessions.map((s) => s.id)).toEqual(["a", "m", "z"]);
  });

  it("pages through every session exactly once with an opaque cursor", async () => {
    const appName = unique("app");
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const res = await t().client.createSession({ appName, userId: i % 2 ? "odd" : "even" });
      ids.push(res.session?.id as string);
    }
    const all = await listAll({ appName, pageSize: 5 });
    expect(all.pages).toBe(5);
    expect(all.sessions.map((s) => s.id)).toEqual(ids);
    const odd = await listAll({ appName, userId: "odd", pageSize: 4 });
    expect(odd.sessions.map((s) => s.id)).toEqual(ids.filter((_, i) => i % 2 === 1));
    // A page that ends exactly at the last session says so.
    const exact = await t().client.listSessions({ appName, userId: "odd", pageSize: 11 });
    expect(exact.sessions).toHaveLength(11);
    expect(exact.nextPageToken).toBe("");
  });

  it("lists every user of the app when user_id is empty, and no other app", async () => {
    const appName = unique("app");
    await t().client.createSession({ appName, userId: "u1", sessionId: "s", state: { "user:who": "u1" } });
    await t().client.createSession({ appName, userId: "u2", sessionId: "s", state: { "user:who": "u2" } });
    await t().client.createSession({ appName: unique("other"), userId: "u1" });
    const { sessions } = await listAll({ appName });
    expect(sessions.map((s) => [s.userId, s.id, s.state?.["user:who"]])).toEqual([
      ["u1", "s", "u1"],
      ["u2", "s", "u2"],
    ]);
    expect((await t().client.listSessions({ appName: unique("empty") })).sessions).toEqual([]);
  });

  it("refuses malformed page tokens, tokens of another listing, and negative page sizes", async () => {
    const appName = unique("app");
    for (let i = 0; i < 3; i++) await t().client.createSession({ appName, userId: "u1" });
    const first = await t().client.listSessions({ appName, userId: "u1", pageSize: 1 });
    expect(first.nextPageToken).not.toBe("");
    await expectCode(t().client.listSessions({ appName, userId: "u1", pageToken: "garbage!" }), Code.InvalidArgument, /page_token/);
    await expectCode(
      t().client.listSessions({ appName, userId: "u2", pageToken: first.nextPageToken }),
      Code.InvalidArgument,
      /page_token/,
    );
    await expectCode(t().client.listSessions({ appName, pageSize: -1 }), Code.InvalidArgument, /page_size/);
  });

  it("deletes a session and its events, keeps app and user state, and succeeds for a missing one", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", sessionId: "doomed" };
    await t().client.createSession({ ...key, state: { "app:a": 1, "user:u": 2, s: 3 } });
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    await t().client.deleteSession(key);
    await expectCode(t().client.getSession(key), Code.NotFound);
    await expectCode(t().client.listEvents(key), Code.NotFound);
    expect((await t().client.getUserState(key)).state).toEqual({ u: 2 });
    expect((await t().client.createSession({ appName, userId: "u1" })).session?.state).toEqual({ "app:a": 1, "user:u": 2 });
    await t().client.deleteSession(key);
    await t().client.deleteSession({ ...key, sessionId: "never-existed" });
    // The id is free again, and the new session starts empty.
    const again = await t().client.createSession(key);
    expect(again.session?.revision).toBe(0n);
    expect((await t().client.getSession(key)).session?.events).toEqual([]);
  });

  it("does not let another user delete a session", async () => {
    const appName = unique("app");
    const key = { appName, userId: "owner", sessionId: "mine" };
    await t().client.createSession(key);
    await t().client.deleteSession({ ...key, userId: "intruder" });
    expect((await t().client.getSession(key)).session?.id).toBe("mine");
  });

  it("returns a user's state without prefixes, and empty when there is none", async () => {
    const appName = unique("app");
    expect((await t().client.getUserState({ appName, userId: "nobody" })).state).toEqual({});
    await t().client.createSession({ appName, userId: "u1", state: { "user:a": 1, "app:b": 2, c: 3 } });
    expect((await t().client.getUserState({ appName, userId: "u1" })).state).toEqual({ a: 1 });
    expect((await t().client.getUserState({ appName, userId: "u2" })).state).toEqual({});
  });
});
