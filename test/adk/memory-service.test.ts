// adk-js's memory-service contract for GrpcMemoryService, side by side with
// adk-js's own InMemoryMemoryService where the two agree, against the real
// server over gRPC on both stores.

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createEvent, createSession, type Event, InMemoryMemoryService, InMemorySessionService } from "@google/adk";
import { expect, it } from "vitest";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { GrpcMemoryService, GrpcSessionService } from "../../src/adk/index.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";

function event(author: string, parts: Record<string, unknown>[], extra: Partial<Event> = {}): Event {
  return createEvent({
    invocationId: "inv-1",
    author,
    content: { role: author === "user" ? "user" : "model", parts: parts as never },
    ...extra,
  });
}

describeContract("adk-js GrpcMemoryService", (t) => {
  const transport = () => createGrpcTransport({ baseUrl: t().server.url });
  const memory = (maxResults?: number) => new GrpcMemoryService(createClient(MemoryService, transport()), { maxResults });
  const sessions = () => new GrpcSessionService(createClient(SessionService, transport()));
  const count = async (appName: string, userId: string) =>
    (await createClient(MemoryService, transport()).listMemories({ appName, userId, pageSize: 1000 })).memories.length;

  it("ingests a stored session's events with content once; adding it again adds only new events", async () => {
    const svc = memory();
    const store = sessions();
    const appName = unique("app");
    const session = await store.createSession({ appName, userId: "u1" });
    await store.appendEvent({ session, event: event("user", [{ text: "My dog is named Biscuit." }]) });
    await store.appendEvent({
      session,
      event: createEvent({ invocationId: "inv-1", author: "assistant", actions: { stateDelta: { k: 1 } } as never }),
    });
    await store.appendEvent({ session, event: event("assistant", [{ text: "Noted, Biscuit." }]) });
    await svc.addSessionToMemory(session);
    await svc.addSessionToMemory(session);
    expect(await count(appName, "u1")).toBe(2);

    await store.appendEvent({ session, event: event("user", [{ text: "Biscuit likes walks." }]) });
    await svc.addSessionToMemory(session);
    expect(await count(appName, "u1")).toBe(3);
    const found = await svc.searchMemory({ appName, userId: "u1", query: "Biscuit" });
    expect(found.memories.map((m) => m.content.parts?.[0]?.text).sort()).toEqual(
      ["Biscuit likes walks.", "My dog is named Biscuit.", "Noted, Biscuit."].sort(),
    );
  });

  it("answers the MemoryEntry adk-js's InMemoryMemoryService answers for the same session", async () => {
    const svc = memory();
    const theirs = new InMemoryMemoryService();
    const appName = unique("app");
    // Kept by another session service: the adapter sends the events.
    const local = new InMemorySessionService();
    const session = await local.createSession({ appName, userId: "u1" });
    const events = [
      event("user", [{ text: "My passport number ends in 4417." }], { timestamp: 1_700_000_000_123 }),
      event("assistant", [{ text: "Saved the passport digits" }, { functionCall: { id: "fc-1", name: "note", args: { n: 4417 } } }], {
        timestamp: 1_700_000_001_456,
      }),
      event("researcher", [{ text: "Passport renewal takes six weeks." }, { text: "Second part." }], { timestamp: 1_700_000_002_000 }),
    ];
    for (const e of events) await local.appendEvent({ session, event: e });
    await svc.addSessionToMemory(session);
    await theirs.addSessionToMemory(session);

    for (const query of ["number", "digits", "renewal"]) {
      const ours = await svc.searchMemory({ appName, userId: "u1", query });
      const want = await theirs.searchMemory({ appName, userId: "u1", query });
      expect(want.memories).toHaveLength(1);
      expect(JSON.parse(JSON.stringify(ours))).toEqual(JSON.parse(JSON.stringify(want)));
    }
    // The same session again (adk-js replaces its copy): nothing is duplicated.
    await svc.addSessionToMemory(session);
    expect(await count(appName, "u1")).toBe(3);
  });

  it("keeps one user's and one app's memories from every other", async () => {
    const svc = memory();
    const appName = unique("app");
    const otherApp = unique("app");
    const add = async (app: string, userId: string, text: string) =>
      svc.addSessionToMemory(createSession({ id: unique("s"), appName: app, userId, events: [event("user", [{ text }])] }));
    await add(appName, "u1", "The wifi password is lantern.");
    await add(appName, "u2", "The wifi password is harbor.");
    await add(otherApp, "u1", "The wifi password is meadow.");
    const texts = async (app: string, userId: string) =>
      (await svc.searchMemory({ appName: app, userId, query: "wifi password" })).memories.map((m) => m.content.parts?.[0]?.text);
    expect(await texts(appName, "u1")).toEqual(["The wifi password is lantern."]);
    expect(await texts(appName, "u2")).toEqual(["The wifi password is harbor."]);
    expect(await texts(otherApp, "u1")).toEqual(["The wifi password is meadow."]);
    expect(await texts(appName, "nobody")).toEqual([]);
  });

  it("skips partial events and events without content, and matches nothing for a query without words", async () => {
    const svc = memory();
    const appName = unique("app");
    await svc.addSessionToMemory(
      createSession({
        id: unique("s"),
        appName,
        userId: "u1",
        events: [
          event("assistant", [{ text: "half a thought about kites" }], { partial: true }),
          createEvent({ invocationId: "inv-1", author: "assistant" }),
          event("user", [{ text: "I fly kites on Sundays." }]),
        ],
      }),
    );
    expect(await count(appName, "u1")).toBe(1);
    expect((await svc.searchMemory({ appName, userId: "u1", query: "kites" })).memories.map((m) => m.content.parts?.[0]?.text)).toEqual([
      "I fly kites on Sundays.",
    ]);
    expect(await svc.searchMemory({ appName, userId: "u1", query: "   " })).toEqual({ memories: [] });
  });

  it("answers at most maxResults entries, the most relevant first", async () => {
    const svc = memory(2);
    const appName = unique("app");
    const texts = ["apples", "apples and pears", "apples, pears and plums", "bananas"];
    await svc.addSessionToMemory(
      createSession({ id: unique("s"), appName, userId: "u1", events: texts.map((text) => event("user", [{ text }])) }),
    );
    const found = await svc.searchMemory({ appName, userId: "u1", query: "apples pears plums" });
    expect(found.memories.map((m) => m.content.parts?.[0]?.text)).toEqual(["apples, pears and plums", "apples and pears"]);
    expect(() => new GrpcMemoryService(createClient(MemoryService, transport()), { maxResults: 0 })).toThrow("maxResults");
    expect(() => new GrpcMemoryService(createClient(MemoryService, transport()), { maxResults: 101 })).toThrow("maxResults");
  });

  it("adds explicit events with provenance and deletes what came from a session", async () => {
    const svc = memory();
    const appName = unique("app");
    const e = event("user", [{ text: "Allergic to peanuts." }]);
    await svc.addEventsToMemory({ appName, userId: "u1", sessionId: "s-1", events: [e], customMetadata: { source: "intake" } });
    await svc.addEventsToMemory({ appName, userId: "u1", sessionId: "s-1", events: [e] });
    const listed = (await createClient(MemoryService, transport()).listMemories({ appName, userId: "u1" })).memories;
    expect(listed.map((m) => [m.sessionId, m.eventId, m.customMetadata])).toEqual([["s-1", e.id, { source: "intake" }]]);
    expect(await svc.deleteSessionMemories({ appName, userId: "u1", sessionId: "s-1" })).toBe(1);
    expect((await svc.searchMemory({ appName, userId: "u1", query: "peanuts" })).memories).toEqual([]);
  });

  it("turns bad input into an Error with the server's message", async () => {
    const svc = memory();
    await expect(svc.searchMemory({ appName: "", userId: "u1", query: "x" })).rejects.toThrow(/app_name/);
  });
});
