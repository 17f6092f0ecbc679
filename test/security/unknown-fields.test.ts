import { create, type Message, toBinary, type UnknownField } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import {
  ContentSchema,
  type Event,
  EventActionsSchema,
  EventSchema,
  FunctionCallSchema,
  PartSchema,
} from "../../gen/ts/sessionstore/v1/event_pb.js";
import {
  AppendEventRequestSchema,
  CreateSessionRequestSchema,
  GetSessionRequestSchema,
  StreamEventsResponseSchema,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { DEFAULT_POLICY } from "../../src/policy/app-policy.js";
import { Redactor } from "../../src/redact/redactor.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { envelope, only, rawCall, rawSession, SERVICE, VIA_CONNECT } from "../support/raw-grpc.js";
import { TailRecorder } from "../support/tail.js";

// A field number the server does not know (a client built on a newer proto)
// used to be kept by the protobuf runtime, stored in the event's bytes and
// served back, past redaction. Every message an event holds is now refused
// with INVALID_ARGUMENT naming the field and its place, on the gRPC fast
// path, on Connect's gRPC path, over gRPC-Web and over the Connect protocol
// alike; inside
// google.protobuf.Struct and Value the runtime drops unknown fields while
// decoding, and requests' own unknown fields are ignored, as protobuf does.
// Whatever is accepted, no byte of an unknown field is stored or streamed.

/** The personal data each unknown field carries: it must never be stored or streamed. */
const MARK = "unseen-";
const secret = (n: number | string) => `${MARK}${n}@example.com`;

/** An unknown field `no` holding a string (length-delimited) with `secret(no)`. */
function unknownString(no: number): UnknownField {
  return { no, wireType: WireType.LengthDelimited, data: new BinaryWriter().string(secret(no)).finish() };
}

/** An event with every kind of message the schema has, each one reachable for the cases below. */
function fullEvent(): Event {
  return create(EventSchema, {
    author: "agent",
    timestamp: { seconds: 1_900_000_000n, nanos: 5 },
    content: {
      role: "model",
      parts: [
        { data: { case: "functionCall", value: { id: "adk-1", name: "lookup", args: { q: "x" } } } },
        { data: { case: "functionResponse", value: { id: "adk-1", name: "lookup", response: { ok: true } } } },
        { data: { case: "inlineData", value: { mimeType: "image/png", data: new Uint8Array([1, 2]) } } },
        { data: { case: "fileData", value: { mimeType: "text/plain", fileUri: "gs://b/o" } } },
        { data: { case: "executableCode", value: { language: "PYTHON", code: "print(1)" } } },
        { data: { case: "codeExecutionResult", value: { outcome: "OUTCOME_OK", output: "1" } } },
        { data: { case: "text", value: "hello" } },
      ],
    },
    actions: {
      stateDelta: { k: "v" },
      compaction: {
        startTimestamp: { seconds: 1n },
        endTimestamp: { seconds: 2n },
        compactedContent: { role: "model", parts: [{ data: { case: "text", value: "summary" } }] },
      },
    },
  });
}

function partValue(event: Event, i: number): Message {
  return event.content?.parts[i]?.data.value as Message;
}

type Case = { where: string; no: number; place: (event: Event) => Message | undefined };

// Each case puts an unknown field into one message, at increasing depth.
const REFUSED: Case[] = [
  { where: "event", no: 77, place: (e) => e },
  { where: "event.timestamp", no: 78, place: (e) => e.timestamp },
  { where: "event.content", no: 79, place: (e) => e.content },
  { where: "event.content.parts[6]", no: 80, place: (e) => e.content?.parts[6] },
  { where: "event.content.parts[0].function_call", no: 81, place: (e) => partValue(e, 0) },
  { where: "event.content.parts[1].function_response", no: 82, place: (e) => partValue(e, 1) },
  { where: "event.content.parts[2].inline_data", no: 83, place: (e) => partValue(e, 2) },
  { where: "event.content.parts[3].file_data", no: 84, place: (e) => partValue(e, 3) },
  { where: "event.content.parts[4].executable_code", no: 85, place: (e) => partValue(e, 4) },
  { where: "event.content.parts[5].code_execution_result", no: 86, place: (e) => partValue(e, 5) },
  { where: "event.actions", no: 87, place: (e) => e.actions },
  { where: "event.actions.compaction", no: 88, place: (e) => e.actions?.compaction },
  { where: "event.actions.compaction.start_timestamp", no: 89, place: (e) => e.actions?.compaction?.startTimestamp },
  { where: "event.actions.compaction.compacted_content.parts[0]", no: 90, place: (e) => e.actions?.compaction?.compactedContent?.parts[0] },
];

/** A Struct on the wire: `{ q: "x" }`, with an unknown field in the Struct and one in the Value. */
function structWithUnknowns(): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).fork(); // fields entry
  w.tag(1, WireType.LengthDelimited).string("q");
  w.tag(2, WireType.LengthDelimited).fork(); // Value
  w.tag(3, WireType.LengthDelimited).string("x"); // string_value
  w.tag(91, WireType.LengthDelimited).string(secret(91));
  w.join();
  w.join();
  w.tag(1, WireType.LengthDelimited).fork(); // a list inside: { l: ["y"] }
  w.tag(1, WireType.LengthDelimited).string("l");
  w.tag(2, WireType.LengthDelimited).fork(); // Value
  w.tag(6, WireType.LengthDelimited).fork(); // list_value
  w.tag(1, WireType.LengthDelimited).fork().tag(3, WireType.LengthDelimited).string("y").join();
  w.tag(92, WireType.LengthDelimited).string(secret(92));
  w.join();
  w.join();
  w.join();
  w.tag(93, WireType.LengthDelimited).string(secret(93));
  return w.finish();
}

/** `message` encoded, then `extra` (whole encoded fields) appended: the encoding of the message with them. */
function withFields(message: Uint8Array, ...extra: Uint8Array[]): Uint8Array {
  const w = new BinaryWriter();
  w.raw(message);
  for (const bytes of extra) w.raw(bytes);
  return w.finish();
}

describeContract("unknown protobuf fields never reach storage", (t) => {
  const session = rawSession(() => t().server.url);

  type Path = { name: string; send: (method: string, body: Uint8Array) => Promise<{ status: string; message: string }> };
  const paths: Path[] = [
    {
      name: "gRPC fast path",
      send: async (method, body) => {
        const c = await rawCall(session(), `${SERVICE}/${method}`, envelope(body));
        return { status: c.status ?? "", message: c.message ?? "" };
      },
    },
    {
      name: "gRPC through Connect",
      send: async (method, body) => {
        const c = await rawCall(session(), `${SERVICE}/${method}`, envelope(body), VIA_CONNECT);
        return { status: c.status ?? "", message: c.message ?? "" };
      },
    },
    {
      name: "Connect protocol, binary, HTTP/1.1",
      send: async (method, body) => {
        const res = await fetch(`${t().server.url}${SERVICE}/${method}`, {
          method: "POST",
          headers: { "content-type": "application/proto" },
          body,
        });
        if (res.ok) {
          await res.arrayBuffer();
          return { status: "0", message: "" };
        }
        const err = (await res.json()) as { code: string; message: string };
        return { status: err.code === "invalid_argument" ? "3" : err.code, message: err.message };
      },
    },
    {
      name: "gRPC-Web, binary, HTTP/1.1",
      send: async (method, body) => {
        const res = await fetch(`${t().server.url}${SERVICE}/${method}`, {
          method: "POST",
          headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
          body: envelope(body),
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        // A trailers-only answer has its status in the headers; otherwise it is the last frame (flag 0x80).
        let trailers = `grpc-status: ${res.headers.get("grpc-status") ?? ""}\r\ngrpc-message: ${res.headers.get("grpc-message") ?? ""}`;
        for (let at = 0; at + 5 <= bytes.length; at += 5 + bytes.readUInt32BE(at + 1)) {
          if ((bytes[at] as number) & 0x80) trailers = bytes.subarray(at + 5, at + 5 + bytes.readUInt32BE(at + 1)).toString();
        }
        const value = (name: string) =>
          /^([^:]+):\s*(.*)$/.exec(trailers.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name}:`)) ?? "")?.[2] ?? "";
        return { status: value("grpc-status"), message: decodeURIComponent(value("grpc-message")) };
      },
    },
  ];

  /** Every byte the store holds: events' bodies and all state, as one string to search. */
  async function everythingStored(): Promise<string> {
    const db = t().database.db;
    const bodies = await db.selectFrom("events").select("body").execute();
    const sessions = await db.selectFrom("sessions").select("state").execute();
    const users = await db.selectFrom("user_states").select("state").execute();
    const apps = await db.selectFrom("app_states").select("state").execute();
    return [
      ...bodies.map((r) => Buffer.from(r.body).toString("latin1")),
      ...[...sessions, ...users, ...apps].map((r) => JSON.stringify(r.state)),
    ].join("\n");
  }

  it("refuses an event with an unknown field at any depth, naming its number and place, on every path; nothing is written", async () => {
    const key = { appName: unique("app"), userId: "u", sessionId: "s" };
    await t().client.createSession(key);
    const tail = new TailRecorder(t().client, key);
    await tail.until((r) => r.caughtUp);
    for (const c of REFUSED) {
      const event = fullEvent();
      const holder = c.place(event) as Message & { $unknown?: UnknownField[] };
      holder.$unknown = [unknownString(c.no)];
      const body = toBinary(AppendEventRequestSchema, create(AppendEventRequestSchema, { ...key, event }));
      for (const p of paths) {
        const answer = await p.send("AppendEvent", body);
        expect(answer.status, `${c.where} via ${p.name}: ${answer.message}`).toBe("3");
        expect(answer.message, `${c.where} via ${p.name}`).toContain(`${c.where} (`);
        expect(answer.message, `${c.where} via ${p.name}`).toContain(`unknown field ${c.no}:`);
        expect(answer.message).not.toContain(MARK);
      }
    }
    // Several at once, of other wire types: each number is named.
    const event = fullEvent();
    (event as Event & { $unknown?: UnknownField[] }).$unknown = [
      { no: 100, wireType: WireType.Varint, data: new BinaryWriter().uint64(7n).finish() },
      unknownString(101),
      { no: 102, wireType: WireType.Bit32, data: new BinaryWriter().fixed32(9).finish() },
    ];
    const body = toBinary(AppendEventRequestSchema, create(AppendEventRequestSchema, { ...key, event }));
    for (const p of paths) {
      const answer = await p.send("AppendEvent", body);
      expect(answer.status, p.name).toBe("3");
      expect(answer.message, p.name).toContain("event (sessionstore.v1.Event) has unknown fields 100, 101, 102:");
    }
    // A partial event, never stored, is refused alike rather than echoed.
    const partial = fullEvent();
    partial.partial = true;
    (partial as Event & { $unknown?: UnknownField[] }).$unknown = [unknownString(103)];
    const partialBody = toBinary(AppendEventRequestSchema, create(AppendEventRequestSchema, { ...key, event: partial }));
    for (const p of paths) expect((await p.send("AppendEvent", partialBody)).status, p.name).toBe("3");

    expect((await t().client.getSession(key)).session?.revision).toBe(0n);
    expect(await everythingStored()).not.toContain(MARK);
    // The same event without the unknown field is stored, and is what the tail sees.
    await t().client.appendEvent({ ...key, event: fullEvent() });
    await tail.until((r) => r.events.length === 1);
    expect(tail.responses.map((r) => Buffer.from(toBinary(StreamEventsResponseSchema, r)).toString("latin1")).join()).not.toContain(MARK);
    tail.cancel();
  });

  it("stores no unknown field of a Struct or Value, of the request around the event, or of a JSON request", async () => {
    const key = { appName: unique("app"), userId: "u", sessionId: "s" };
    await t().client.createSession(key);
    const tail = new TailRecorder(t().client, key);
    await tail.until((r) => r.caughtUp);
    const field = (no: number, bytes: Uint8Array) => new BinaryWriter().tag(no, WireType.LengthDelimited).bytes(bytes).finish();

    // A function call whose args (a Struct) carry unknown fields in the
    // Struct, a Value and a ListValue; custom metadata and a state delta
    // alike; and an unknown field of the request itself.
    const functionCall = withFields(
      toBinary(FunctionCallSchema, create(FunctionCallSchema, { id: "adk-2", name: "lookup" })),
      field(FunctionCallSchema.field.args.number, structWithUnknowns()),
    );
    const content = field(ContentSchema.field.parts.number, field(PartSchema.field.functionCall.number, functionCall));
    const event = withFields(
      toBinary(EventSchema, create(EventSchema, { author: "agent" })),
      field(EventSchema.field.content.number, content),
      field(EventSchema.field.customMetadata.number, structWithUnknowns()),
      field(EventSchema.field.actions.number, field(EventActionsSchema.field.stateDelta.number, structWithUnknowns())),
    );
    const request = withFields(
      toBinary(AppendEventRequestSchema, create(AppendEventRequestSchema, key)),
      field(AppendEventRequestSchema.field.event.number, event),
      field(99, new BinaryWriter().string(secret(99)).finish()),
    );
    for (const p of paths) {
      const answer = await p.send("AppendEvent", request);
      expect(answer.status, `${p.name}: ${answer.message}`).toBe("0");
    }
    const stored = (await t().client.listEvents(key)).events;
    expect(stored.length).toBe(paths.length);
    for (const e of stored) {
      const part = e.content?.parts[0]?.data;
      expect(part?.case === "functionCall" && part.value.args).toEqual({ q: "x", l: ["y"] });
      expect(e.customMetadata).toEqual({ q: "x", l: ["y"] });
      expect(e.actions?.stateDelta).toEqual({ q: "x", l: ["y"] });
    }

    // Initial state of new sessions, on every path.
    for (const [i, p] of paths.entries()) {
      const created = withFields(
        toBinary(CreateSessionRequestSchema, create(CreateSessionRequestSchema, { ...key, sessionId: `created-${i}` })),
        field(CreateSessionRequestSchema.field.state.number, structWithUnknowns()),
        field(98, new BinaryWriter().string(secret(98)).finish()),
      );
      const answer = await p.send("CreateSession", created);
      expect(answer.status, `${p.name}: ${answer.message}`).toBe("0");
      const got = await t().client.getSession({ ...key, sessionId: `created-${i}` });
      expect(got.session?.state, p.name).toEqual({ q: "x", l: ["y"] });
    }

    // JSON has no field numbers: Connect ignores keys it does not know.
    const json = await fetch(`${t().server.url}${SERVICE}/AppendEvent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        ...key,
        event: { author: "agent", unknownKey: secret("json"), content: { parts: [{ text: "hi", other: secret("json") }] } },
      }),
    });
    expect(json.status).toBe(200);
    await json.arrayBuffer();

    expect(await everythingStored()).not.toContain(MARK);
    const read = await rawCall(
      session(),
      `${SERVICE}/GetSession`,
      envelope(toBinary(GetSessionRequestSchema, create(GetSessionRequestSchema, key))),
    );
    expect(read.status).toBe("0");
    expect(Buffer.from(only(read)).toString("latin1")).not.toContain(MARK);
    await tail.until((r) => r.events.length === paths.length + 1);
    expect(tail.responses.map((r) => Buffer.from(toBinary(StreamEventsResponseSchema, r)).toString("latin1")).join()).not.toContain(MARK);
    tail.cancel();
  });
});

describe("the redactor", () => {
  it("keeps no unknown field of a message it redacts, should one get past the handler", () => {
    const event = fullEvent();
    const holders = [
      event,
      event.content,
      event.content?.parts[0],
      partValue(event, 0),
      event.timestamp,
      event.actions?.compaction,
    ] as (Message & {
      $unknown?: UnknownField[];
    })[];
    holders.forEach((h, i) => {
      h.$unknown = [unknownString(120 + i)];
    });
    new Redactor(DEFAULT_POLICY.redaction).redactEvent(event);
    expect(Buffer.from(toBinary(EventSchema, event)).toString("latin1")).not.toContain(MARK);
    expect(holders.map((h) => h.$unknown)).toEqual(holders.map(() => undefined));
  });
});
