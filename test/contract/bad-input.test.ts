import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { sql } from "kysely";
import { expect, it } from "vitest";
import { type AppendEventRequest, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";

const nested = (depth: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < depth; i++) value = { child: value };
  return value;
};

describeContract("bad input", (t) => {
  const ids: [string, string, RegExp][] = [
    ["empty", "", /must not be empty/],
    ["over-long", "x".repeat(129), /limit is 128/],
    ["padded", " s1 ", /whitespace/],
    ["control character", "a\u0007b", /control characters/],
    ["newline", "a\nb", /control characters/],
  ];

  for (const [what, bad, message] of ids) {
    it(`refuses a ${what} id on every keyed RPC with INVALID_ARGUMENT`, async () => {
      const appName = unique("app");
      const c = t().client;
      const calls = [
        () => c.createSession({ appName: bad, userId: "u" }),
        () => c.createSession({ appName, userId: bad }),
        () => c.getSession({ appName, userId: "u", sessionId: bad }),
        () => c.getSession({ appName: bad, userId: "u", sessionId: "s" }),
        () => c.listSessions({ appName: bad }),
        () => c.deleteSession({ appName, userId: bad, sessionId: "s" }),
        () => c.appendEvent({ appName, userId: "u", sessionId: bad, event: { author: "user" } }),
        () => c.listEvents({ appName, userId: "u", sessionId: bad }),
        () => c.getUserState({ appName, userId: bad }),
      ];
      // An empty session id on create means "generate one".
      if (bad !== "") calls.push(() => c.createSession({ appName, userId: "u", sessionId: bad }));
      for (const call of calls) await expectCode(call(), Code.InvalidArgument, message);
      // Nothing was created along the way.
      expect((await t().client.listSessions({ appName })).sessions).toEqual([]);
    });
  }

  it("accepts unicode ids", async () => {
    const key = { appName: unique("app"), userId: "Jürgen 山田", sessionId: "séance-🙂" };
    await t().client.createSession(key);
    expect((await t().client.getSession(key)).session?.userId).toBe("Jürgen 山田");
  });

  it("refuses malformed events with INVALID_ARGUMENT and writes nothing", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession({ ...key, state: { before: true } });
    const cases: [string, Partial<AppendEventRequest>, RegExp][] = [
      ["no event", { event: undefined }, /event is required/],
      ["no author", { event: { author: "" } as never }, /author/],
      ["control character in author", { event: { author: "a\u0000b" } as never }, /author/],
      ["bad timestamp", { event: { author: "user", timestamp: { seconds: 1n, nanos: 2_000_000_000 } } as never }, /nanos/],
      ["timestamp past year 9999", { event: { author: "user", timestamp: { seconds: 253402300800n, nanos: 0 } } as never }, /years/],
      ["NaN in the delta", { event: { author: "user", actions: { stateDelta: { x: Number.NaN } } } as never }, /finite/],
      ["Infinity in metadata", { event: { author: "user", customMetadata: { x: Number.POSITIVE_INFINITY } } as never }, /finite/],
      ["NUL in a state value", { event: { author: "user", actions: { stateDelta: { x: "a\u0000b" } } } as never }, /NUL/],
      ["NUL in a state key", { event: { author: "user", actions: { stateDelta: { "a\u0000": 1 } } } as never }, /NUL/],
      ["deep nesting", { event: { author: "user", actions: { stateDelta: nested(40) } } as never }, /nested/],
      ["nesting past the decoder's limit", { event: { author: "user", actions: { stateDelta: nested(400) } } as never }, /depth/],
      [
        "timestamp before int64 nanoseconds",
        { event: { author: "user", timestamp: { seconds: -10_000_000_000n, nanos: 0 } } as never },
        /1677/,
      ],
      [
        "timestamp past int64 nanoseconds",
        { event: { author: "user", timestamp: { seconds: 9_223_372_037n, nanos: 0 } } as never },
        /2262/,
      ],
      ["negative expected_revision", { event: { author: "user" } as never, expectedRevision: -1n }, /expected_revision/],
      ["over-long event id", { event: { author: "user", id: "e".repeat(200) } as never }, /event.id/],
    ];
    for (const [what, req, message] of cases) {
      const err = await expectCode(t().client.appendEvent({ ...key, ...req } as AppendEventRequest), Code.InvalidArgument, message);
      expect(err.rawMessage, what).not.toMatch(/internal/i);
    }
    const session = (await t().client.getSession(key)).session;
    expect(session?.revision).toBe(0n);
    expect(session?.state).toEqual({ before: true });
  });

  it("refuses a bad initial state and creates nothing", async () => {
    const appName = unique("app");
    await expectCode(
      t().client.createSession({ appName, userId: "u1", sessionId: "s", state: { "user:x": Number.NaN } }),
      Code.InvalidArgument,
    );
    await expectCode(t().client.createSession({ appName, userId: "u1", sessionId: "s", state: { x: "\u0000" } }), Code.InvalidArgument);
    await expectCode(t().client.getSession({ appName, userId: "u1", sessionId: "s" }), Code.NotFound);
    expect((await t().client.getUserState({ appName, userId: "u1" })).state).toEqual({});
  });

  it("keeps a user:__proto__ key as a key, and lets no key pollute prototypes", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({
      ...key,
      event: { author: "user", actions: { stateDelta: JSON.parse('{"user:__proto__": 5, "__x": 1}') } },
    });
    // Read from the table: this TypeScript client's own Struct decoder would drop the key.
    const { rows } = await sql<{ state: string }>`SELECT state::text AS state FROM user_states WHERE app_name = ${key.appName}`.execute(
      t().database.db,
    );
    expect(rows[0]?.state).toBe('{"__proto__": 5}');
    const state = (await t().client.getSession(key)).session?.state ?? {};
    expect(Object.keys(state).sort()).toEqual(["__x", "user:__proto__"]);
    // A key named exactly "__proto__" never reaches the server: protobuf-es
    // drops it while decoding (SECURITY.md). It must at least pollute nothing.
    await t().client.appendEvent({
      ...key,
      event: { author: "user", actions: { stateDelta: JSON.parse('{"__proto__": {"polluted": 1}}') } },
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("accepts any after_timestamp in the Timestamp range", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    const early = await t().client.getSession({ ...key, afterTimestamp: { seconds: -62135596800n, nanos: 0 } });
    expect(early.session?.events).toHaveLength(1);
    const late = await t().client.getSession({ ...key, afterTimestamp: { seconds: 253402300799n, nanos: 999_999_999 } });
    expect(late.session?.events).toHaveLength(0);
  });

  it("stores a NUL inside event content, which is not state", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    const text = "before\u0000after";
    await t().client.appendEvent({ ...key, event: { author: "user", content: { parts: [{ data: { case: "text", value: text } }] } } });
    const part = (await t().client.getSession(key)).session?.events[0]?.content?.parts[0];
    expect(part?.data).toEqual({ case: "text", value: text });
  });

  it("refuses bytes that are not protobuf with INVALID_ARGUMENT on every protocol", async () => {
    const url = `${t().server.url}/sessionstore.v1.SessionService/GetUserState`;
    const garbage = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const connect = await fetch(url, { method: "POST", headers: { "content-type": "application/proto" }, body: garbage });
    expect(connect.status).toBe(400);
    expect(((await connect.json()) as { code: string }).code).toBe("invalid_argument");
    const framed = new Uint8Array(5 + garbage.length);
    new DataView(framed.buffer).setUint32(1, garbage.length);
    framed.set(garbage, 5);
    const web = await fetch(url, { method: "POST", headers: { "content-type": "application/grpc-web+proto" }, body: framed });
    const text = Buffer.from(await web.arrayBuffer()).toString("latin1");
    expect(text).toMatch(/grpc-status: ?3\r\n/);
  });

  it("refuses a request over the message size limit with RESOURCE_EXHAUSTED", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    const huge = "x".repeat(17 * 1024 * 1024);
    // Node's HTTP/2 client buffers at most 10 MiB per session by default.
    const client = createClient(SessionService, createGrpcTransport({ baseUrl: t().server.url, nodeOptions: { maxSessionMemory: 100 } }));
    await expectCode(
      client.appendEvent({ ...key, event: { author: "user", content: { parts: [{ data: { case: "text", value: huge } }] } } }),
      Code.ResourceExhausted,
    );
    expect((await t().client.getSession(key)).session?.revision).toBe(0n);
  });

  it("refuses a lone surrogate sent as Connect JSON", async () => {
    const appName = unique("app");
    const res = await fetch(`${t().server.url}/sessionstore.v1.SessionService/CreateSession`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"appName":"${appName}","userId":"u\\ud800x"}`,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toMatch(/user_id/);
  });
});
