import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

describeContract("AppendEvent", (t) => {
  const newSession = async (state?: Record<string, unknown>) => {
    const key = { appName: unique("app"), userId: "u1", sessionId: unique("s") };
    await t().client.createSession({ ...key, state: state as never });
    return key;
  };

  it("assigns seq 1, 2, 3 and advances revision and last_update_time with each stored event", async () => {
    const key = await newSession();
    let lastUpdate = (await t().client.getSession(key)).session?.lastUpdateTime;
    for (let i = 1; i <= 3; i++) {
      const res = await t().client.appendEvent({ ...key, event: { author: "user" } });
      expect(res.stored).toBe(true);
      expect(res.duplicate).toBe(false);
      expect(res.event?.seq).toBe(BigInt(i));
      expect(res.revision).toBe(BigInt(i));
      // The server set a timestamp, and the session's update time is it.
      expect(res.event?.timestamp).toBeDefined();
      expect(res.lastUpdateTime).toEqual(res.event?.timestamp);
      const session = (await t().client.getSession(key)).session;
      expect(session?.revision).toBe(BigInt(i));
      expect(session?.lastUpdateTime).toEqual(res.lastUpdateTime);
      const before = lastUpdate ? lastUpdate.seconds * 1_000_000_000n + BigInt(lastUpdate.nanos) : 0n;
      const after = res.lastUpdateTime ? res.lastUpdateTime.seconds * 1_000_000_000n + BigInt(res.lastUpdateTime.nanos) : 0n;
      expect(after > before).toBe(true);
      lastUpdate = res.lastUpdateTime;
    }
  });

  it("generates an event id when none is given and ignores a client-set seq", async () => {
    const key = await newSession();
    const res = await t().client.appendEvent({ ...key, event: { author: "user", seq: 99n } });
    expect(res.event?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.event?.seq).toBe(1n);
  });

  it("never stores a partial event", async () => {
    const key = await newSession();
    const res = await t().client.appendEvent({
      ...key,
      event: {
        author: "agent",
        partial: true,
        content: { parts: [{ data: { case: "text", value: "Hel" } }] },
        actions: { stateDelta: { x: 1 } },
      },
    });
    expect(res.stored).toBe(false);
    expect(res.event?.partial).toBe(true);
    const session = (await t().client.getSession(key)).session;
    expect(session?.events).toEqual([]);
    expect(session?.revision).toBe(0n);
    expect(session?.state).toEqual({});
    await expectCode(t().client.appendEvent({ ...key, sessionId: "missing", event: { author: "a", partial: true } }), Code.NotFound);
  });

  it("strips temp: keys from the stored delta and from state", async () => {
    const key = await newSession();
    const res = await t().client.appendEvent({
      ...key,
      event: { author: "agent", actions: { stateDelta: { kept: 1, "temp:claims": "secret", "user:tier": "gold" } } },
    });
    expect(res.event?.actions?.stateDelta).toEqual({ kept: 1, "user:tier": "gold" });
    const session = (await t().client.getSession(key)).session;
    expect(session?.state).toEqual({ kept: 1, "user:tier": "gold" });
    expect(session?.events[0]?.actions?.stateDelta).toEqual({ kept: 1, "user:tier": "gold" });
  });

  it("replaces whole values per key, stores null instead of deleting, and keeps booleans", async () => {
    const key = await newSession({ cart: { a: 1, b: 2 }, flag: true, gone: "x", "user:prefs": { lang: "en", units: "metric" } });
    await t().client.appendEvent({
      ...key,
      event: { author: "agent", actions: { stateDelta: { cart: { c: 3 }, gone: null, flag: false, "user:prefs": { lang: "fr" } } } },
    });
    const state = (await t().client.getSession(key)).session?.state;
    expect(state).toEqual({ cart: { c: 3 }, flag: false, gone: null, "user:prefs": { lang: "fr" } });
    expect(state && "gone" in state).toBe(true);
    expect((await t().client.getUserState(key)).state).toEqual({ prefs: { lang: "fr" } });
  });

  it("applies app: and user: deltas to state shared with other sessions", async () => {
    const key = await newSession();
    await t().client.appendEvent({ ...key, event: { author: "agent", actions: { stateDelta: { "app:motd": "hi", "user:name": "Ada" } } } });
    const sibling = await t().client.createSession({ appName: key.appName, userId: key.userId });
    expect(sibling.session?.state).toEqual({ "app:motd": "hi", "user:name": "Ada" });
    const other = await t().client.createSession({ appName: key.appName, userId: "u2" });
    expect(other.session?.state).toEqual({ "app:motd": "hi" });
  });

  it("keeps a client timestamp to the nanosecond", async () => {
    const key = await newSession();
    const timestamp = { seconds: 1_732_950_000n, nanos: 123_456_789 };
    const res = await t().client.appendEvent({ ...key, event: { author: "user", timestamp } });
    expect(res.event?.timestamp).toEqual(expect.objectContaining(timestamp));
    const stored = (await t().client.getSession(key)).session?.events[0];
    expect(stored?.timestamp).toEqual(expect.objectContaining(timestamp));
  });

  it("refuses a stale expected_revision with ABORTED naming the current revision, and writes nothing", async () => {
    const key = await newSession();
    await t().client.appendEvent({ ...key, event: { author: "user" }, expectedRevision: 0n });
    await t().client.appendEvent({ ...key, event: { author: "user" }, expectedRevision: 1n });
    const err = await expectCode(
      t().client.appendEvent({ ...key, event: { author: "user", actions: { stateDelta: { x: 1 } } }, expectedRevision: 1n }),
      Code.Aborted,
      /current revision 2/,
    );
    expect(err.rawMessage).toMatch(/modified in storage/);
    const session = (await t().client.getSession(key)).session;
    expect(session?.revision).toBe(2n);
    expect(session?.state).toEqual({});
  });

  it("is idempotent on event.id: a re-sent id returns the stored event and writes nothing", async () => {
    const key = await newSession();
    const first = await t().client.appendEvent({
      ...key,
      event: { id: "evt-1", author: "agent", actions: { stateDelta: { n: 1 } } },
      expectedRevision: 0n,
    });
    // The retry carries a different payload and a now-stale revision: still the stored event.
    const again = await t().client.appendEvent({
      ...key,
      event: { id: "evt-1", author: "agent", actions: { stateDelta: { n: 2 } } },
      expectedRevision: 0n,
    });
    expect(again.duplicate).toBe(true);
    expect(again.event).toEqual(first.event);
    expect(again.revision).toBe(1n);
    const session = (await t().client.getSession(key)).session;
    expect(session?.events).toHaveLength(1);
    expect(session?.state).toEqual({ n: 1 });
    // The same id in another session is a different event.
    const other = await newSession();
    expect((await t().client.appendEvent({ ...other, event: { id: "evt-1", author: "agent" } })).duplicate).toBe(false);
  });

  it("answers NOT_FOUND for an unknown session and for another user's session", async () => {
    const key = await newSession();
    await expectCode(t().client.appendEvent({ ...key, sessionId: "nope", event: { author: "user" } }), Code.NotFound);
    await expectCode(t().client.appendEvent({ ...key, userId: "intruder", event: { author: "user" } }), Code.NotFound);
    expect((await t().client.getSession(key)).session?.revision).toBe(0n);
  });

  it("round-trips every field of an event exactly", async () => {
    const key = await newSession();
    const event: Event = create(EventSchema, {
      id: "full",
      invocationId: "inv-1",
      author: "weather_agent",
      branch: "root.weather_agent",
      timestamp: { seconds: 1_800_000_000n, nanos: 1 },
      turnComplete: true,
      interrupted: false,
      errorCode: "E1",
      errorMessage: "oops",
      finishReason: "STOP",
      modelVersion: "gemini-x",
      longRunningToolIds: ["call-1", "call-2"],
      customMetadata: { trace: "abc", nested: { list: [1, "two", null, true] } },
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 7 },
      groundingMetadata: { webSearchQueries: ["weather zurich"] },
      citationMetadata: { citations: [] },
      extra: { outputTranscription: { text: "hello" }, someFutureField: 42 },
      content: {
        role: "model",
        extra: { foo: "bar" },
        parts: [
          { data: { case: "text", value: "It is sunny ☀️ — 21°C" }, thought: false },
          { data: { case: "text", value: "thinking" }, thought: true, thoughtSignature: new Uint8Array([0, 1, 2, 255]) },
          { data: { case: "functionCall", value: { id: "call-1", name: "get_weather", args: { city: "Zurich", days: 3 } } } },
          { data: { case: "functionResponse", value: { id: "call-1", name: "get_weather", response: { result: { temp: 21.5 } } } } },
          {
            data: {
              case: "inlineData",
              value: { mimeType: "image/png", data: new Uint8Array([137, 80, 78, 71, 0, 0]), displayName: "p.png" },
            },
          },
          { data: { case: "fileData", value: { mimeType: "application/pdf", fileUri: "gs://b/o.pdf" } } },
          { data: { case: "executableCode", value: { language: "PYTHON", code: "print(1)" } } },
          { data: { case: "codeExecutionResult", value: { outcome: "OUTCOME_OK", output: "1\n" } } },
          { extra: { videoMetadata: { fps: 2 } } },
        ],
      },
      actions: {
        stateDelta: { a: 1, "user:b": [1, 2], "app:c": { d: null } },
        artifactDelta: { "report.pdf": 3n },
        transferToAgent: "billing_agent",
        escalate: true,
        skipSummarization: false,
        requestedAuthConfigs: { "call-9": { authScheme: "oauth2" } },
        requestedToolConfirmations: { "call-1": { hint: "confirm?", confirmed: false } },
        compaction: {
          startTimestamp: { seconds: 1n, nanos: 2 },
          endTimestamp: { seconds: 3n, nanos: 4 },
          compactedContent: { role: "model", parts: [{ data: { case: "text", value: "summary" } }] },
        },
        endOfAgent: true,
        agentState: { step: 2 },
        rewindBeforeInvocationId: "inv-0",
        extra: { newAction: "x" },
      },
    });
    const res = await t().client.appendEvent({ ...key, event });
    // Compared as bytes: the client decodes bytes fields as Buffers.
    const expected = toBinary(EventSchema, create(EventSchema, { ...event, seq: 1n }));
    const bytes = (e: Event | undefined) => new Uint8Array(toBinary(EventSchema, e as Event));
    expect(bytes(res.event)).toEqual(expected);
    expect(bytes((await t().client.getSession(key)).session?.events[0])).toEqual(expected);
    expect(bytes((await t().client.listEvents(key)).events[0])).toEqual(expected);
  });
});
