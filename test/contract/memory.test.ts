import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { type Content, ContentSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { MemoryService, SearchMemoryRequest_QueryMode } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { snapshot } from "../support/db-snapshot.js";
import { unique } from "../support/ids.js";

const text = (value: string): Content => create(ContentSchema, { role: "user", parts: [{ data: { case: "text", value } }] });

const POLICY = JSON.stringify({
  apps: {
    keep: { memory: { deleteWithSession: false } },
    small: { memory: { maxMemoryBytes: 200, maxMemoriesPerUser: 3 } },
    stems: { memory: { textConfig: "english" } },
    short: { memory: { ttlSeconds: 1 } },
  },
});

describeContract(
  "MemoryService",
  (server) => {
    const memory = () => server().clientFor(MemoryService);
    const sessions = () => server().client;

    it("stores explicit entries with every field, reads them back, and replaces an entry by id", async () => {
      const user = unique("u");
      const when = timestampFromDate(new Date("2026-03-04T05:06:07.123Z"));
      const { memories } = await memory().addMemories({
        appName: "app",
        userId: user,
        memories: [
          {
            content: text("I prefer window seats"),
            author: "user",
            timestamp: when,
            customMetadata: { topic: "travel" },
            namespace: "prefs/travel",
          },
          { id: "fixed-id", content: text("My dog is called Rex") },
        ],
        customMetadata: { source: "import", topic: "default" },
      });
      expect(memories).toHaveLength(2);
      const [first, second] = memories;
      expect(first?.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(first?.timestamp).toEqual(when);
      expect(first?.customMetadata).toEqual({ source: "import", topic: "travel" });
      expect(first?.namespace).toBe("prefs/travel");
      expect(first?.sessionId).toBe("");
      expect(second?.id).toBe("fixed-id");

      const got = await memory().getMemory({ appName: "app", userId: user, memoryId: first?.id ?? "" });
      expect(got.memory?.content?.parts[0]?.data).toEqual({ case: "text", value: "I prefer window seats" });
      expect(got.memory?.author).toBe("user");

      await memory().addMemories({ appName: "app", userId: user, memories: [{ id: "fixed-id", content: text("My dog is called Max") }] });
      const listed = await memory().listMemories({ appName: "app", userId: user });
      expect(listed.memories.map((m) => m.id).sort()).toEqual([first?.id, "fixed-id"].sort());
      const replaced = listed.memories.find((m) => m.id === "fixed-id");
      expect(replaced?.content?.parts[0]?.data.value).toBe("My dog is called Max");
      const found = await memory().searchMemory({ appName: "app", userId: user, query: "Rex" });
      expect(found.results).toEqual([]);
    });

    it("searches by words, best match first, with highlights, and never returns another user's entries", async () => {
      const alice = unique("alice");
      const bob = unique("bob");
      await memory().addMemories({
        appName: "app",
        userId: alice,
        memories: [
          { content: text("My sister lives in Lisbon and works as a nurse") },
          { content: text("I am allergic to peanuts") },
          { content: text("My favourite city is Lisbon, I visit Lisbon every spring") },
        ],
      });
      await memory().addMemories({ appName: "app", userId: bob, memories: [{ content: text("Bob also loves Lisbon") }] });
      const res = await memory().searchMemory({ appName: "app", userId: alice, query: "Which city do I visit in spring?" });
      expect(res.results.length).toBeGreaterThan(0);
      expect(res.results[0]?.memory?.content?.parts[0]?.data.value).toBe("My favourite city is Lisbon, I visit Lisbon every spring");
      expect(res.results[0]?.highlight).toContain("<b>spring</b>");
      expect(res.results[0]?.textScore).toBeGreaterThan(0);
      expect(res.results.every((r) => r.memory?.userId === alice)).toBe(true);
      for (let i = 1; i < res.results.length; i++) {
        expect(res.results[i - 1]?.score ?? 0).toBeGreaterThanOrEqual(res.results[i]?.score ?? 0);
      }
      const bobs = await memory().searchMemory({ appName: "app", userId: bob, query: "peanuts nurse" });
      expect(bobs.results).toEqual([]);
      const other = await memory().searchMemory({ appName: "other-app", userId: alice, query: "Lisbon" });
      expect(other.results).toEqual([]);
    });

    it("reads websearch syntax in WEBSEARCH mode: all words, phrases, exclusions", async () => {
      const user = unique("u");
      await memory().addMemories({
        appName: "app",
        userId: user,
        memories: [
          { content: text("red apples are sweet") },
          { content: text("green apples are sour") },
          { content: text("red cars are fast") },
        ],
      });
      const q = (query: string) =>
        memory()
          .searchMemory({ appName: "app", userId: user, query, mode: SearchMemoryRequest_QueryMode.WEBSEARCH })
          .then((r) => r.results.map((x) => x.memory?.content?.parts[0]?.data.value).sort());
      expect(await q("red apples")).toEqual(["red apples are sweet"]);
      expect(await q('"apples are sour"')).toEqual(["green apples are sour"]);
      expect(await q("apples -green")).toEqual(["red apples are sweet"]);
      expect(await q("sweet or fast")).toEqual(["red apples are sweet", "red cars are fast"]);
      // ANY mode: any word.
      const any = await memory().searchMemory({ appName: "app", userId: user, query: "red apples" });
      expect(any.results).toHaveLength(3);
      // Query text is never tsquery syntax.
      const odd = await memory().searchMemory({ appName: "app", userId: user, query: "apples' & | ! :* ( \\ \"" });
      expect(odd.results).toHaveLength(2);
    });

    it("filters by author, time range, metadata, session and namespace prefix", async () => {
      const user = unique("u");
      const at = (iso: string) => timestampFromDate(new Date(iso));
      await memory().addMemories({
        appName: "app",
        userId: user,
        memories: [
          {
            content: text("coffee one"),
            author: "user",
            timestamp: at("2026-01-01T00:00:00Z"),
            customMetadata: { kind: "pref" },
            namespace: "a/b",
          },
          {
            content: text("coffee two"),
            author: "agent",
            timestamp: at("2026-02-01T00:00:00Z"),
            customMetadata: { kind: "fact" },
            namespace: "a/c",
          },
          { content: text("coffee three"), author: "user", timestamp: at("2026-03-01T00:00:00Z"), sessionId: "s-9", namespace: "b" },
        ],
      });
      const q = (filter: Record<string, unknown>) =>
        memory()
          .searchMemory({ appName: "app", userId: user, query: "coffee", filter })
          .then((r) => r.results.map((x) => x.memory?.content?.parts[0]?.data.value).sort());
      expect(await q({ authors: ["agent"] })).toEqual(["coffee two"]);
      expect(await q({ startTime: at("2026-02-01T00:00:00Z") })).toEqual(["coffee three", "coffee two"]);
      expect(await q({ endTime: at("2026-02-01T00:00:00Z") })).toEqual(["coffee one"]);
      expect(await q({ metadata: { kind: "pref" } })).toEqual(["coffee one"]);
      expect(await q({ sessionIds: ["s-9"] })).toEqual(["coffee three"]);
      expect(await q({ namespacePrefix: "a/" })).toEqual(["coffee one", "coffee two"]);
      const listed = await memory().listMemories({ appName: "app", userId: user, filter: { namespacePrefix: "a/" } });
      expect(listed.memories).toHaveLength(2);
    });

    it("pages through a listing newest first", async () => {
      const user = unique("u");
      for (let i = 0; i < 5; i++)
        await memory().addMemories({ appName: "app", userId: user, memories: [{ id: `m${i}`, content: text(`entry ${i}`) }] });
      const seen: string[] = [];
      let pageToken = "";
      do {
        const page = await memory().listMemories({ appName: "app", userId: user, pageSize: 2, pageToken });
        seen.push(...page.memories.map((m) => m.id));
        pageToken = page.nextPageToken;
      } while (pageToken);
      expect(seen).toEqual(["m4", "m3", "m2", "m1", "m0"]);
      await expectCode(memory().listMemories({ appName: "app", userId: "someone-else", pageToken: "x" }), Code.InvalidArgument);
    });

    it("ingests a session once: a second call adds only new events, with provenance", async () => {
      const user = unique("u");
      const { session } = await sessions().createSession({ appName: "app", userId: user });
      const sessionId = session?.id ?? "";
      const append = (author: string, value: string | undefined, id: string) =>
        sessions().appendEvent({
          appName: "app",
          userId: user,
          sessionId,
          event: { id, author, content: value === undefined ? undefined : text(value) },
        });
      await append("user", "I moved to Porto last week\u0000", "e1");
      await append("agent", undefined, "e2");
      await append("agent", "Noted, you live in Porto now", "e3");
      const first = await memory().addSessionToMemory({ appName: "app", userId: user, sessionId, customMetadata: { via: "test" } });
      expect(first.memoriesAdded).toBe(2n);
      expect(first.eventsRead).toBe(3n);
      const again = await memory().addSessionToMemory({ appName: "app", userId: user, sessionId });
      expect(again.memoriesAdded).toBe(0n);
      expect(again.eventsRead).toBe(0n);
      await append("user", "My Porto flat has a balcony", "e4");
      const third = await memory().addSessionToMemory({ appName: "app", userId: user, sessionId });
      expect(third).toMatchObject({ memoriesAdded: 1n, eventsRead: 1n });

      const res = await memory().searchMemory({ appName: "app", userId: user, query: "Porto" });
      expect(res.results).toHaveLength(3);
      const byEvent = new Map(res.results.map((r) => [r.memory?.eventId, r.memory]));
      expect([...byEvent.keys()].sort()).toEqual(["e1", "e3", "e4"]);
      expect(byEvent.get("e1")?.sessionId).toBe(sessionId);
      expect(byEvent.get("e1")?.author).toBe("user");
      expect(byEvent.get("e3")?.author).toBe("agent");
      // Content comes back as the event had it, NUL included.
      expect(byEvent.get("e1")?.content?.parts[0]?.data.value).toBe("I moved to Porto last week\u0000");
      expect(byEvent.get("e1")?.customMetadata).toEqual({ via: "test" });

      await expectCode(memory().addSessionToMemory({ appName: "app", userId: user, sessionId: "missing" }), Code.NotFound);
      // Another user's session is not found either.
      await expectCode(memory().addSessionToMemory({ appName: "app", userId: unique("x"), sessionId }), Code.NotFound);
    });

    it("adds events idempotently by event id, with an optional session", async () => {
      const user = unique("u");
      const events = [
        { id: "ev-1", author: "user", content: text("The wifi password is on the fridge") },
        { id: "ev-2", author: "user", content: text("") },
      ];
      const first = await memory().addEventsToMemory({ appName: "app", userId: user, sessionId: "ext-1", events });
      expect(first.memoriesAdded).toBe(1n);
      expect(first.memoryIds).toHaveLength(1);
      const again = await memory().addEventsToMemory({ appName: "app", userId: user, sessionId: "ext-1", events });
      expect(again.memoriesAdded).toBe(0n);
      const noSession = await memory().addEventsToMemory({ appName: "app", userId: user, events });
      expect(noSession.memoriesAdded).toBe(1n);
      const res = await memory().searchMemory({ appName: "app", userId: user, query: "wifi" });
      expect(res.results.map((r) => r.memory?.sessionId).sort()).toEqual(["", "ext-1"]);
      // Without an id, an event is known by author, time and content; thoughts are not searched.
      const anonymous = [
        {
          author: "agent",
          content: create(ContentSchema, {
            parts: [
              { data: { case: "text", value: "hidden reasoning about umbrellas" }, thought: true },
              { data: { case: "text", value: "Bring a raincoat" } },
            ],
          }),
        },
      ];
      expect((await memory().addEventsToMemory({ appName: "app", userId: user, events: anonymous })).memoriesAdded).toBe(1n);
      expect((await memory().addEventsToMemory({ appName: "app", userId: user, events: anonymous })).memoriesAdded).toBe(0n);
      expect((await memory().searchMemory({ appName: "app", userId: user, query: "raincoat" })).results).toHaveLength(1);
      expect((await memory().searchMemory({ appName: "app", userId: user, query: "umbrellas" })).results).toEqual([]);
    });

    it("deletes by id and by source session; DeleteSession deletes derived memories unless the app keeps them", async () => {
      for (const appName of ["app", "keep"]) {
        const user = unique("u");
        const { session } = await sessions().createSession({ appName, userId: user });
        const sessionId = session?.id ?? "";
        await sessions().appendEvent({
          appName,
          userId: user,
          sessionId,
          event: { id: "e1", author: "user", content: text("tulips in the garden") },
        });
        await memory().addSessionToMemory({ appName, userId: user, sessionId });
        const { memories } = await memory().addMemories({
          appName,
          userId: user,
          memories: [{ content: text("tulips are my favourite") }],
        });
        await sessions().deleteSession({ appName, userId: user, sessionId });
        const left = await memory().searchMemory({ appName, userId: user, query: "tulips" });
        expect(left.results.map((r) => r.memory?.sessionId).sort()).toEqual(appName === "app" ? [""] : ["", sessionId]);

        const explicit = memories[0]?.id ?? "";
        expect((await memory().deleteMemory({ appName, userId: user, memoryId: explicit })).deleted).toBe(true);
        expect((await memory().deleteMemory({ appName, userId: user, memoryId: explicit })).deleted).toBe(false);
        await expectCode(memory().getMemory({ appName, userId: user, memoryId: explicit }), Code.NotFound);
        const bySession = await memory().deleteSessionMemories({ appName, userId: user, sessionId });
        expect(bySession.memoriesDeleted).toBe(appName === "app" ? 0n : 1n);
        expect((await memory().listMemories({ appName, userId: user })).memories).toEqual([]);
      }
    });

    it("erases a user's memories with EraseUserData, and only theirs", async () => {
      const user = unique("u");
      const other = unique("o");
      await memory().addMemories({ appName: "app", userId: user, memories: [{ content: text("a") }, { content: text("b") }] });
      await memory().addMemories({ appName: "app", userId: other, memories: [{ content: text("c") }] });
      const erased = await sessions().eraseUserData({ appName: "app", userId: user });
      expect(erased.memoriesDeleted).toBe(2n);
      expect((await memory().listMemories({ appName: "app", userId: user })).memories).toEqual([]);
      expect((await memory().listMemories({ appName: "app", userId: other })).memories).toHaveLength(1);
    });

    it("redacts personal data in content and metadata before storing", async () => {
      const user = unique("u");
      await memory().addMemories({
        appName: "app",
        userId: user,
        memories: [{ content: text("Mail me at jane.doe@example.com"), customMetadata: { phone: "+1 415 555 0100" } }],
      });
      await memory().addEventsToMemory({
        appName: "app",
        userId: user,
        events: [{ id: "x", author: "user", content: text("card 4111 1111 1111 1111") }],
      });
      const listed = await memory().listMemories({ appName: "app", userId: user });
      const all = JSON.stringify(listed.memories.map((m) => [m.content?.parts[0]?.data.value, m.customMetadata]));
      expect(all).not.toContain("jane.doe@example.com");
      expect(all).not.toContain("4111");
      expect(all).not.toContain("555 0100");
      expect((await memory().searchMemory({ appName: "app", userId: user, query: "jane.doe@example.com" })).results).toEqual([]);
    });

    it("refuses entries over the size caps with RESOURCE_EXHAUSTED and writes nothing", async () => {
      const user = unique("u");
      const before = await snapshot(server().database);
      await expectCode(
        memory().addMemories({ appName: "small", userId: user, memories: [{ content: text("ok") }, { content: text("x".repeat(300)) }] }),
        Code.ResourceExhausted,
        /maxMemoryBytes/,
      );
      await expectCode(
        memory().addMemories({ appName: "small", userId: user, memories: [1, 2, 3, 4].map((i) => ({ content: text(`n${i}`) })) }),
        Code.ResourceExhausted,
        /maxMemoriesPerUser/,
      );
      expect(await snapshot(server().database)).toBe(before);
      await memory().addMemories({ appName: "small", userId: user, memories: [1, 2, 3].map((i) => ({ content: text(`n${i}`) })) });
    });

    it("refuses bad input with INVALID_ARGUMENT naming the field", async () => {
      const user = unique("u");
      const bad: [Promise<unknown>, RegExp][] = [
        [memory().addMemories({ appName: "", userId: user, memories: [{ content: text("a") }] }), /app_name/],
        [memory().addMemories({ appName: "app", userId: user, memories: [] }), /memories must not be empty/],
        [memory().addMemories({ appName: "app", userId: user, memories: [{}] }), /memories\[0\]\.content/],
        [memory().addMemories({ appName: "app", userId: user, memories: [{ id: " pad", content: text("a") }] }), /memories\[0\]\.id/],
        [
          memory().addMemories({
            appName: "app",
            userId: user,
            memories: [
              { id: "d", content: text("a") },
              { id: "d", content: text("b") },
            ],
          }),
          /appears twice/,
        ],
        [memory().addMemories({ appName: "app", userId: user, memories: [{ content: text("a"), embedding: [Number.NaN] }] }), /embedding/],
        [memory().addMemories({ appName: "app", userId: user, memories: [{ content: text("a"), eventId: "e" }] }), /event_id/],
        [memory().searchMemory({ appName: "app", userId: user, query: "  " }), /query/],
        [memory().searchMemory({ appName: "app", userId: user, query: "a", pageSize: -1 }), /page_size/],
        [memory().searchMemory({ appName: "app", userId: user, query: "a", mode: 9 as SearchMemoryRequest_QueryMode }), /mode/],
        [memory().searchMemory({ appName: "app", userId: user, query: "a", filter: { sessionIds: [""] } }), /filter\.session_ids\[0\]/],
        [memory().addEventsToMemory({ appName: "app", userId: user, events: [{ author: "" }] }), /events\[0\]\.author/],
        [memory().getMemory({ appName: "app", userId: user, memoryId: "" }), /memory_id/],
      ];
      for (const [call, message] of bad) await expectCode(call, Code.InvalidArgument, message);
    });

    it("uses the app's text configuration: english stems words", async () => {
      const user = unique("u");
      await memory().addMemories({ appName: "stems", userId: user, memories: [{ content: text("She runs marathons") }] });
      const stemmed = await memory().searchMemory({ appName: "stems", userId: user, query: "running a marathon" });
      expect(stemmed.results).toHaveLength(1);
      await memory().addMemories({ appName: "app", userId: user, memories: [{ content: text("She runs marathons") }] });
      const simple = await memory().searchMemory({ appName: "app", userId: user, query: "running a marathon" });
      expect(simple.results).toEqual([]);
    });

    it("treats expired entries as gone: their own expire_time and the app's memory retention", async () => {
      const user = unique("u");
      const past = timestampFromDate(new Date(Date.now() - 1000));
      const future = timestampFromDate(new Date(Date.now() + 3_600_000));
      await memory().addMemories({
        appName: "app",
        userId: user,
        memories: [
          { id: "gone", content: text("old news"), expireTime: past },
          { id: "kept", content: text("fresh news"), expireTime: future },
        ],
      });
      const res = await memory().searchMemory({ appName: "app", userId: user, query: "news" });
      expect(res.results.map((r) => r.memory?.id)).toEqual(["kept"]);
      expect(res.results[0]?.memory?.expireTime).toEqual(future);
      await expectCode(memory().getMemory({ appName: "app", userId: user, memoryId: "gone" }), Code.NotFound);

      const { memories } = await memory().addMemories({ appName: "short", userId: user, memories: [{ content: text("brief") }] });
      expect(memories[0]?.expireTime).toBeDefined();
      await expect
        .poll(async () => (await memory().listMemories({ appName: "short", userId: user })).memories.length, { timeout: 5000 })
        .toBe(0);
      await server().server.sweeper.sweepOnce();
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM memories WHERE user_id = ${user}`.execute(
        server().database.db,
      );
      expect(rows[0]?.n).toBe(1); // "kept" only
    });
  },
  { policy: POLICY },
);
