// adk-js's session-service contract (the Python adapter's cases, with
// adk-js DatabaseSessionService's behaviour where the two ports differ),
// against the real server over gRPC on both stores.

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createEvent, createSession, type Event, type Session } from "@google/adk";
import { expect, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { GrpcSessionService } from "../../src/adk/index.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";

const USER = "u1";

function textEvent(text: string, delta: Record<string, unknown> = {}, options: { author?: string; timestamp?: number } = {}): Event {
  const author = options.author ?? "user";
  return createEvent({
    invocationId: "inv-1",
    author,
    content: { role: author === "user" ? "user" : "model", parts: [{ text }] },
    actions: { stateDelta: { ...delta } },
    ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
  });
}

/** A session's data, without the helpers' object identity. */
const plain = (s: Session | undefined) => JSON.parse(JSON.stringify(s)) as unknown;

describeContract("adk-js GrpcSessionService", (t) => {
  const service = () => new GrpcSessionService(createClient(SessionService, createGrpcTransport({ baseUrl: t().server.url })));
  const reload = async (svc: GrpcSessionService, s: Session, config?: { numRecentEvents?: number; afterTimestamp?: number }) => {
    const got = await svc.getSession({ appName: s.appName, userId: s.userId, sessionId: s.id, config });
    if (!got) throw new Error(`session ${s.id} is gone`);
    return got;
  };

  it("creates with merged state and no temp: keys; get returns the same session", async () => {
    const svc = service();
    const appName = unique("app");
    const created = await svc.createSession({ appName, userId: USER, state: { "app:a": 1, "user:u": "x", s: [1, 2], "temp:t": true } });
    expect(created.id).not.toBe("");
    expect(created.state).toEqual({ "app:a": 1, "user:u": "x", s: [1, 2] });
    expect(created.events).toEqual([]);
    expect(Math.abs(created.lastUpdateTime - Date.now())).toBeLessThan(60_000);
    expect(plain(await reload(svc, created))).toEqual(plain(created));
  });

  it("generates an id when none or an empty one is given", async () => {
    const svc = service();
    const appName = unique("app");
    const a = await svc.createSession({ appName, userId: USER });
    const b = await svc.createSession({ appName, userId: USER, sessionId: "" });
    expect(a.id).not.toBe(b.id);
    expect(a.id && b.id).toBeTruthy();
  });

  it("refuses a taken id with adk-js's error, also when creates race", async () => {
    const svc = service();
    const appName = unique("app");
    await svc.createSession({ appName, userId: USER, sessionId: "s1" });
    await expect(svc.createSession({ appName, userId: USER, sessionId: "s1" })).rejects.toThrow("Session with id s1 already exists.");
    const raced = await Promise.allSettled(
      Array.from({ length: 5 }, () => svc.createSession({ appName, userId: USER, sessionId: "same" })),
    );
    expect(raced.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of raced) if (r.status === "rejected") expect(String(r.reason)).toContain("already exists");
  });

  it("gives undefined for a missing session or another user's", async () => {
    const svc = service();
    const appName = unique("app");
    const s = await svc.createSession({ appName, userId: USER });
    expect(await svc.getSession({ appName, userId: USER, sessionId: "nope" })).toBeUndefined();
    expect(await svc.getSession({ appName, userId: "other", sessionId: s.id })).toBeUndefined();
  });

  it("keeps app:, user: and session state in their scopes", async () => {
    const svc = service();
    const appName = unique("app");
    const s1 = await svc.createSession({ appName, userId: "alice", state: { "app:color": "red", "user:lang": "en", mine: 1 } });
    const s2 = await svc.createSession({ appName, userId: "alice" });
    const s3 = await svc.createSession({ appName, userId: "bob" });
    const other = await svc.createSession({ appName: `${appName}-other`, userId: "alice" });
    expect((await reload(svc, s2)).state).toEqual({ "app:color": "red", "user:lang": "en" });
    expect((await reload(svc, s3)).state).toEqual({ "app:color": "red" });
    expect((await reload(svc, other)).state).toEqual({});
    await svc.appendEvent({ session: s3, event: textEvent("hi", { "app:color": "blue", "user:lang": "de", "temp:scratch": 1, mine: 3 }) });
    expect((await reload(svc, s1)).state).toEqual({ "app:color": "blue", "user:lang": "en", mine: 1 });
    expect((await reload(svc, s3)).state).toEqual({ "app:color": "blue", "user:lang": "de", mine: 3 });
  });

  it("trims temp: keys from the event and never stores them (adk-js keeps them out of the session too)", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER, state: { "temp:init": 1 } });
    expect(session.state).toEqual({});
    const event = textEvent("hi", { "temp:t": "scratch", kept: 1 });
    const returned = await svc.appendEvent({ session, event });
    expect(returned.actions.stateDelta).toEqual({ kept: 1 });
    expect(event.actions.stateDelta).toEqual({ kept: 1 });
    expect(session.state).toEqual({ kept: 1 });
    const stored = await reload(svc, session);
    expect(stored.state).toEqual({ kept: 1 });
    expect(stored.events[0]?.actions.stateDelta).toEqual({ kept: 1 });
  });

  it("replaces whole values per key, keeps null and booleans", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({
      appName,
      userId: USER,
      state: { d: { a: 1, b: 2 }, "user:d": { a: 1 }, "app:d": { a: 1 }, gone: 1 },
    });
    const delta = {
      d: { c: 3 },
      "user:d": { c: 3 },
      "app:d": { c: 3 },
      gone: null,
      yes: true,
      no: false,
      zero: 0,
      half: 0.5,
      empty: {},
      nested: [{ k: null }],
    };
    await svc.appendEvent({ session, event: textEvent("x", delta) });
    expect((await reload(svc, session)).state).toEqual(delta);
    expect(session.state).toEqual(delta);
  });

  it("windows events like adk-js's database service: numRecentEvents (0 = none) and afterTimestamp (exclusive)", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER });
    const base = Date.now() - 100_000;
    const events: Event[] = [];
    for (let i = 0; i < 5; i++)
      events.push(await svc.appendEvent({ session, event: textEvent(`e${i}`, {}, { timestamp: base + i * 1000 }) }));
    const all = events.map((e) => e.id);
    const ids = async (config?: { numRecentEvents?: number; afterTimestamp?: number }) =>
      (await reload(svc, session, config)).events.map((e) => e.id);
    expect(await ids()).toEqual(all);
    expect(await ids({})).toEqual(all);
    expect(await ids({ numRecentEvents: 0 })).toEqual([]);
    expect(await ids({ numRecentEvents: 2 })).toEqual(all.slice(3));
    expect(await ids({ numRecentEvents: 99 })).toEqual(all);
    expect(await ids({ afterTimestamp: base + 2000 })).toEqual(all.slice(3));
    expect(await ids({ afterTimestamp: base + 1999.5 })).toEqual(all.slice(2));
    expect(await ids({ numRecentEvents: 1, afterTimestamp: base + 2000 })).toEqual(all.slice(4));
    expect(await ids({ numRecentEvents: 4, afterTimestamp: base + 2000 })).toEqual(all.slice(3));
    const windowed = await reload(svc, session, { numRecentEvents: 1 });
    expect(windowed.state).toEqual(session.state);
  });

  it("lists sessions without events, with merged state, and pages like adk-js (limit, offset, page, order)", async () => {
    const svc = service();
    const appName = unique("app");
    const s1 = await svc.createSession({ appName, userId: USER, state: { "user:u": 1, k: "s1" } });
    const s2 = await svc.createSession({ appName, userId: USER, state: { k: "s2" } });
    const s3 = await svc.createSession({ appName, userId: USER });
    await svc.createSession({ appName, userId: "other" });
    await svc.appendEvent({ session: s1, event: textEvent("newest") });

    const listed = await svc.listSessions({ appName, userId: USER });
    expect(listed.sessions.map((s) => s.id)).toEqual([s2.id, s3.id, s1.id]);
    expect(listed.sessions.map((s) => s.state)).toEqual([{ "user:u": 1, k: "s2" }, { "user:u": 1 }, { "user:u": 1, k: "s1" }]);
    expect(listed.sessions.every((s) => s.events.length === 0)).toBe(true);
    expect(listed.sessions[2]?.lastUpdateTime).toBe(s1.lastUpdateTime);
    expect({ ...listed, sessions: undefined }).toEqual({ sessions: undefined, page: 1, limit: 3, totalItems: 3, totalPages: 1 });

    const desc = await svc.listSessions({ appName, userId: USER, order: "desc" });
    expect(desc.sessions.map((s) => s.id)).toEqual([s1.id, s3.id, s2.id]);
    const paged = await svc.listSessions({ appName, userId: USER, limit: 2, page: 2, order: "asc" });
    expect(paged.sessions.map((s) => s.id)).toEqual([s1.id]);
    expect({ ...paged, sessions: undefined }).toEqual({ sessions: undefined, page: 2, limit: 2, totalItems: 3, totalPages: 2 });
    const offset = await svc.listSessions({ appName, userId: USER, limit: 2, offset: 1 });
    expect(offset.sessions.map((s) => s.id)).toEqual([s3.id, s1.id]);
    expect(offset.page).toBe(1);
    const onlyOffset = await svc.listSessions({ appName, userId: USER, offset: 2 });
    expect(onlyOffset.sessions.map((s) => s.id)).toEqual([s1.id]);
    expect(onlyOffset.totalItems).toBe(3);

    const everyone = await svc.listSessions({ appName });
    expect(everyone.sessions.map((s) => s.userId).sort()).toEqual(["other", USER, USER, USER].sort());
    expect(await svc.listSessions({ appName: `${appName}-none` })).toEqual({
      sessions: [],
      page: 1,
      limit: 0,
      totalItems: 0,
      totalPages: 0,
    });
  });

  it("deletes a session and its events, keeps app and user state, and ignores a missing one", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER, state: { "app:a": 1, "user:u": 2, s: 3 } });
    await svc.appendEvent({ session, event: textEvent("x") });
    await svc.deleteSession({ appName, userId: USER, sessionId: session.id });
    expect(await svc.getSession({ appName, userId: USER, sessionId: session.id })).toBeUndefined();
    await svc.deleteSession({ appName, userId: USER, sessionId: session.id });
    expect((await svc.createSession({ appName, userId: USER })).state).toEqual({ "app:a": 1, "user:u": 2 });
    const again = await svc.createSession({ appName, userId: USER, sessionId: session.id });
    expect((await reload(svc, again)).events).toEqual([]);
  });

  it("refuses an append to an unknown or deleted session with adk-js's error", async () => {
    const svc = service();
    const appName = unique("app");
    const never = createSession({ id: "nope", appName, userId: USER });
    await expect(svc.appendEvent({ session: never, event: textEvent("x") })).rejects.toThrow("Session nope not found for appendEvent");
    const deleted = await svc.createSession({ appName, userId: USER });
    await svc.deleteSession({ appName, userId: USER, sessionId: deleted.id });
    await expect(svc.appendEvent({ session: deleted, event: textEvent("x") })).rejects.toThrow("not found for appendEvent");
    expect(deleted.events).toEqual([]);
  });

  it("stores an append through a stale copy and reloads that copy from storage, as adk-js's database service does", async () => {
    const svc = service();
    const appName = unique("app");
    const created = await svc.createSession({ appName, userId: USER });
    const first = await reload(svc, created);
    const second = await reload(svc, created);
    await svc.appendEvent({ session: first, event: textEvent("first", { k: "first", a: 1 }) });
    const late = textEvent("second", { k: "second" });
    await svc.appendEvent({ session: second, event: late });
    expect(second.events.map((e) => e.content?.parts?.[0]?.text)).toEqual(["first", "second"]);
    expect(second.events[1]).toBe(late);
    expect(second.state).toEqual({ k: "second", a: 1 });
    expect(plain(await reload(svc, created))).toEqual(plain(second));
    // A session object this service never returned is treated the same way.
    const byHand = createSession({ id: created.id, appName, userId: USER });
    await svc.appendEvent({ session: byHand, event: textEvent("by hand") });
    expect(byHand.events).toHaveLength(3);
    expect(plain(byHand)).toEqual(plain(await reload(svc, created)));
  });

  it("keeps the in-memory session equal to the stored one across appends", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER, state: { "user:u": 0 } });
    for (let i = 0; i < 3; i++) {
      await svc.appendEvent({ session, event: textEvent(`m${i}`, { n: i, "user:u": i }, { author: i % 2 ? "agent" : "user" }) });
    }
    expect(plain(session)).toEqual(plain(await reload(svc, session)));
  });

  it("does not store partial events", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER });
    const chunk = textEvent("chunk", { k: 1 }, { author: "agent" });
    chunk.partial = true;
    expect(await svc.appendEvent({ session, event: chunk })).toBe(chunk);
    expect(session.events).toEqual([]);
    expect(session.state).toEqual({});
    expect((await reload(svc, session)).events).toEqual([]);
  });

  it("moves lastUpdateTime to the last event's time, fractions of a millisecond included", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER });
    const event = textEvent("x", {}, { timestamp: Math.floor(Date.now()) + 1000.25 });
    await svc.appendEvent({ session, event });
    expect(session.lastUpdateTime).toBe(event.timestamp);
    const stored = await reload(svc, session);
    expect(stored.lastUpdateTime).toBe(event.timestamp);
    expect(stored.events[0]?.timestamp).toBe(event.timestamp);
    expect((await svc.listSessions({ appName, userId: USER })).sessions[0]?.lastUpdateTime).toBe(event.timestamp);
  });

  it("treats a retried append as done, and refuses different content under a taken event id", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER });
    const copy = await reload(svc, session);
    const event = textEvent("once", { k: 1 });
    await svc.appendEvent({ session, event });
    const retry = structuredClone(event);
    expect(await svc.appendEvent({ session: copy, event: retry })).toBe(retry);
    expect(copy.events).toEqual([]);
    expect((await reload(svc, session)).events).toHaveLength(1);
    const clash = textEvent("different");
    clash.id = event.id;
    await expect(svc.appendEvent({ session: await reload(svc, session), event: clash })).rejects.toThrow("already exists");
  });

  it("round-trips every field of a rich event, bytes and fields the proto has no slot for included", async () => {
    const svc = service();
    const appName = unique("app");
    const session = await svc.createSession({ appName, userId: USER });
    const rich = createEvent({
      invocationId: "inv-rich",
      author: "billing_agent",
      branch: "root.billing",
      timestamp: 1_614_834_367_123.456,
      turnComplete: true,
      interrupted: false,
      finishReason: "STOP" as never,
      modelVersion: "scripted-2",
      errorCode: "",
      longRunningToolIds: ["call-1"],
      content: {
        role: "model",
        parts: [
          { text: "Grüße 🚀" },
          { text: "thinking", thought: true, thoughtSignature: "AP8AEHNpZ/7/" },
          { text: "" },
          { functionCall: { id: "call-1", name: "lookup", args: { n: [1, 2.5, null, { deep: true }] }, willContinue: false } as never },
          { functionResponse: { id: "call-1", name: "lookup", response: { ok: true } } },
          { inlineData: { mimeType: "application/octet-stream", data: "AAH/fn+A/v8A", displayName: "raw.bin" } },
          { inlineData: { mimeType: "text/plain", data: "not base64!" } },
          { fileData: { mimeType: "application/pdf", fileUri: "gs://b/q3.pdf" } },
          { executableCode: { language: "PYTHON" as never, code: "print(1)" } },
          { codeExecutionResult: { outcome: "OUTCOME_OK" as never, output: "1\n" } },
          { videoMetadata: { fps: 2 } },
        ],
      },
      actions: {
        stateDelta: { k: "v" },
        artifactDelta: { "a.pdf": 3 },
        transferToAgent: "refund",
        escalate: true,
        skipSummarization: false,
        endOfAgent: true,
        agentState: { step: 2 },
        requestedToolConfirmations: { "call-1": { hint: "sure?", confirmed: false } as never },
      },
      customMetadata: { trace: { span: "a1" } },
      usageMetadata: { promptTokenCount: 12, totalTokenCount: 14 },
      groundingMetadata: { webSearchQueries: ["q"] },
      citationMetadata: { citations: [{ startIndex: 0, endIndex: 5 }] },
      output: { answer: 42 },
      isolationScope: "billing",
      nodeInfo: { path: "a/b" },
    });
    await svc.appendEvent({ session, event: rich });
    const stored = await reload(svc, session);
    expect(stored.events).toEqual([JSON.parse(JSON.stringify(rich))]);
    // Typed slots where the proto has them, for Python and Go to read.
    const raw = (await t().client.getSession({ appName, userId: USER, sessionId: session.id })).session?.events[0];
    expect(raw?.content?.parts.map((p) => p.data.case)).toEqual([
      "text",
      "text",
      "text",
      "functionCall",
      "functionResponse",
      "inlineData",
      undefined,
      "fileData",
      "executableCode",
      "codeExecutionResult",
      undefined,
    ]);
    expect(raw?.content?.parts[5]?.data.value).toMatchObject({ data: Buffer.from([0, 1, 255, 126, 127, 128, 254, 255, 0]) });
    expect(raw?.timestamp).toMatchObject({ seconds: 1_614_834_367n, nanos: 123_456_000 });
    expect(raw?.actions?.artifactDelta).toEqual({ "a.pdf": 3n });
    expect(raw?.errorCode).toBe("");
    expect(raw?.extra).toEqual({ output: { answer: 42 }, isolationScope: "billing", nodeInfo: { path: "a/b" } });
  });
});

it("keeps @google/adk out of the server: nothing outside src/adk imports it", async () => {
  const { readdir, readFile } = await import("node:fs/promises");
  const offenders: string[] = [];
  for (const entry of await readdir("src", { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const path = `${entry.parentPath}/${entry.name}`;
    if (path.startsWith("src/adk/")) continue;
    const text = await readFile(path, "utf8");
    if (/from\s+["'](@google\/adk|[./]*adk\/)/.test(text) || /import\(["']@google\/adk/.test(text)) offenders.push(path);
  }
  expect(offenders).toEqual([]);
});
