import type http2 from "node:http2";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import {
  StreamEventsRequestSchema,
  type StreamEventsResponse,
  StreamEventsResponseSchema,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { envelope, type Frame, RawCall, rawSession, SERVICE, VIA_CONNECT } from "../support/raw-grpc.js";

// Server-streaming gRPC calls with a binary, uncompressed request are served
// by the server's own handler (src/server/grpc/), which writes each tail's
// events from one shared encoding; everything else goes to Connect. The same
// bytes down both paths must give the same messages and the same status.

const PATH = `${SERVICE}/StreamEvents`;

function request(init: MessageInitShape<typeof StreamEventsRequestSchema>): Buffer {
  return envelope(toBinary(StreamEventsRequestSchema, create(StreamEventsRequestSchema, init)));
}

function decoded(call: RawCall): StreamEventsResponse[] {
  return call.frames.map((f) => fromBinary(StreamEventsResponseSchema, f.message));
}

/** The field numbers of the StreamedEvent inside an event response, in the order they were written. */
function streamedFieldOrder(message: Uint8Array): number[] {
  const fields = (bytes: Uint8Array) => {
    const out: { field: number; value: Uint8Array }[] = [];
    let at = 0;
    const varint = () => {
      let v = 0;
      for (let shift = 0; ; shift += 7) {
        const b = bytes[at++] as number;
        v += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) return v;
      }
    };
    while (at < bytes.length) {
      const tag = varint();
      if ((tag & 7) !== 2) throw new Error(`unexpected wire type in tag ${tag}`);
      const length = varint();
      out.push({ field: tag >>> 3, value: bytes.subarray(at, at + length) });
      at += length;
    }
    return out;
  };
  const [event] = fields(message);
  if (event?.field !== 1) throw new Error("not an event response");
  return fields(event.value).map((f) => f.field);
}

function kinds(call: RawCall): StreamEventsResponse["kind"]["case"][] {
  return decoded(call).map((r) => r.kind.case);
}

describeContract(
  "server-streaming gRPC fast path",
  (t) => {
    const session = rawSession(() => t().server.url);

    const open = (req: MessageInitShape<typeof StreamEventsRequestSchema> | Buffer, extra: http2.OutgoingHttpHeaders = {}) =>
      new RawCall(session(), PATH, Buffer.isBuffer(req) ? req : request(req), extra);

    async function sessionWithEvents(texts: string[]) {
      const key = { appName: unique("app"), userId: "u", sessionId: "s" };
      await t().client.createSession({ ...key, state: { "user:tier": "gold" } });
      for (const [i, text] of texts.entries()) {
        await t().client.appendEvent({
          ...key,
          event: {
            author: i % 2 ? "agent" : "user",
            content: { parts: [{ data: { case: "text", value: text } }] },
            actions: { stateDelta: { turn: i, "user:n": i } },
          },
        });
      }
      return key;
    }

    it("streams history, caught_up and the end at the deadline as Connect does", async () => {
      const key = await sessionWithEvents(["first", "zweite Nachricht ✓", ""]);
      const deadline = { "grpc-timeout": "3S" };
      const [fast, viaConnect] = await Promise.all([open(key, deadline).done, open(key, { ...deadline, ...VIA_CONNECT }).done]);
      expect(kinds(fast)).toEqual(["event", "event", "event", "caughtUp"]);
      expect(decoded(fast)).toEqual(decoded(viaConnect));
      const stored = (await t().client.getSession(key)).session?.events;
      expect(decoded(fast).flatMap((r) => (r.kind.case === "event" ? [r.kind.value.event] : []))).toEqual(stored);
      // A tail only ends when something ends it: here its deadline, named as such on both paths.
      expect(Code[Number(fast.status)]).toBe(Code[Code.DeadlineExceeded]);
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
    });

    it("sends every tail of a scope one shared encoding of an event, each scope its own cursor, and lets go of cancelled tails", async () => {
      const key = await sessionWithEvents([]);
      const feed = t().server.streams.feed;
      const before = feed.subscriberCount;
      const tails = [open(key), open(key), open({ appName: key.appName }), open({ appName: key.appName }, VIA_CONNECT)];
      await Promise.all(tails.map((tail) => tail.frameCount(1)));
      expect(feed.subscriberCount).toBe(before + tails.length);
      await t().client.appendEvent({ ...key, event: { author: "user", content: { parts: [{ data: { case: "text", value: "live" } }] } } });
      await Promise.all(tails.map((tail) => tail.frameCount(2)));
      for (const tail of tails) tail.cancel();
      const [one, two, app, appViaConnect] = tails.map((tail) => tail.frames[1] as Frame);
      if (!one || !two || !app || !appViaConnect) throw new Error("four frames expected");
      // The shared encoding is the response without its event, then the
      // stored event bytes as field 4; Connect encodes fields in order.
      expect(streamedFieldOrder(one.message)).toEqual([1, 2, 3, 5, 4]);
      expect(streamedFieldOrder(app.message)).toEqual([1, 2, 3, 5, 4]);
      expect(streamedFieldOrder(appViaConnect.message)).toEqual([1, 2, 3, 4, 5]);
      expect(one.raw.equals(two.raw)).toBe(true);
      const stored = (await t().client.getSession(key)).session?.events[0];
      const [first, wide, wideViaConnect] = [one, app, appViaConnect].map((f) => fromBinary(StreamEventsResponseSchema, f.message));
      expect(first?.kind.case === "event" && first.kind.value.event).toEqual(stored);
      expect(wide).toEqual(wideViaConnect);
      expect(wide?.kind.case === "event" && wide.kind.value.event).toEqual(stored);
      const cursor = (r: StreamEventsResponse | undefined) => (r?.kind.case === "event" ? r.kind.value.cursor : undefined);
      expect(cursor(wide)).not.toEqual(cursor(first));
      expect(first?.kind.case === "event" && first.kind.value).toMatchObject({ appName: key.appName, userId: "u", sessionId: "s" });
      // Cancelled on either path, every tail gives up its subscription.
      await Promise.all(tails.map((tail) => tail.done));
      const deadline = Date.now() + 10_000;
      while (feed.subscriberCount > before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(feed.subscriberCount).toBe(before);
    });

    it("keeps a tail open under a deadline too long for a timer (grpc-go sends 30 days as 2592000S)", async () => {
      const key = await sessionWithEvents(["a"]);
      const tail = open(key, { "grpc-timeout": "2592000S" });
      await tail.frameCount(2);
      await new Promise((r) => setTimeout(r, 200));
      expect(tail.status).toBeUndefined();
      await t().client.appendEvent({ ...key, event: { author: "agent" } });
      await tail.frameCount(3);
      tail.cancel();
      expect(kinds(tail)).toEqual(["event", "caughtUp", "event"]);
    });

    it("gives the same status and message for every kind of bad request", async () => {
      const appName = unique("app");
      await t().client.createSession({ appName, userId: "u", sessionId: "s" });
      const cases: { name: string; body: Buffer; code: Code }[] = [
        { name: "no app", body: request({ appName: "" }), code: Code.InvalidArgument },
        { name: "session without user", body: request({ appName, sessionId: "s" }), code: Code.InvalidArgument },
        { name: "bad cursor", body: request({ appName, start: { case: "cursor", value: "nonsense" } }), code: Code.InvalidArgument },
        { name: "unknown session", body: request({ appName, userId: "u", sessionId: "nope" }), code: Code.NotFound },
        { name: "not protobuf", body: envelope(Buffer.from([0xff, 0xff, 0xff, 0xff])), code: Code.InvalidArgument },
        { name: "no message", body: Buffer.alloc(0), code: Code.Unimplemented },
        { name: "two messages", body: Buffer.concat([request({ appName }), request({ appName })]), code: Code.Unimplemented },
        { name: "cut envelope", body: request({ appName }).subarray(0, 8), code: Code.InvalidArgument },
        {
          name: "over the size limit",
          body: Buffer.concat([Buffer.from([0, 0, 0, 0x10, 0]), Buffer.alloc(4096)]),
          code: Code.ResourceExhausted,
        },
      ];
      for (const c of cases) {
        const [fast, viaConnect] = await Promise.all([open(c.body).done, open(c.body, VIA_CONNECT).done]);
        expect(Code[Number(fast.status)], `${c.name}: ${fast.message}`).toBe(Code[c.code]);
        expect(fast.message, c.name).toBeTruthy();
        expect(fast.frames, c.name).toEqual([]);
        expect({ status: fast.status, message: fast.message }, c.name).toEqual({ status: viaConnect.status, message: viaConnect.message });
      }
      const badDeadline = request({ appName });
      const [fast, viaConnect] = await Promise.all([
        open(badDeadline, { "grpc-timeout": "soon" }).done,
        open(badDeadline, { "grpc-timeout": "soon", ...VIA_CONNECT }).done,
      ]);
      expect(fast.status).not.toBe("0");
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
    });

    it("ends with NOT_FOUND after the events when the session is deleted, on both paths", async () => {
      const key = await sessionWithEvents(["a", "b"]);
      const fast = open(key);
      const viaConnect = open(key, VIA_CONNECT);
      await Promise.all([fast.frameCount(3), viaConnect.frameCount(3)]);
      await t().client.deleteSession(key);
      await Promise.all([fast.done, viaConnect.done]);
      expect(Code[Number(fast.status)]).toBe(Code[Code.NotFound]);
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
      expect(decoded(fast)).toEqual(decoded(viaConnect));
    });

    it("refuses an event whose response is over the size limit, as Connect does", async () => {
      // The appended request fits; the streamed response adds the ids and a cursor, and does not.
      const key = { appName: unique("app"), userId: "u", sessionId: "s" };
      await t().client.createSession(key);
      await t().client.appendEvent({
        ...key,
        event: { author: "user", content: { parts: [{ data: { case: "text", value: "y".repeat(1950) } }] } },
      });
      const deadline = { "grpc-timeout": "5S" };
      const [fast, viaConnect] = await Promise.all([open(key, deadline).done, open(key, { ...deadline, ...VIA_CONNECT }).done]);
      expect(Code[Number(fast.status)]).toBe(Code[Code.ResourceExhausted]);
      expect(fast.message).toMatch(/larger than configured writeMaxBytes 2048/);
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
    });

    it("gzips large messages for clients that accept gzip, and only those", async () => {
      const key = await sessionWithEvents(["z".repeat(1500), "short"]);
      const plain = open(key);
      const zipped = open(key, { "grpc-accept-encoding": "identity, gzip" });
      // Two events and caught_up, then nothing until a heartbeat.
      await Promise.all([plain.frameCount(3), zipped.frameCount(3)]);
      plain.cancel();
      zipped.cancel();
      expect(plain.headers["grpc-encoding"]).toBeUndefined();
      expect(plain.frames.map((f) => f.flags)).toEqual([0, 0, 0]);
      expect(zipped.headers["grpc-encoding"]).toBe("gzip");
      // Each message says whether it was worth compressing.
      expect(zipped.frames.map((f) => f.flags)).toEqual([1, 0, 0]);
      expect(decoded(zipped)).toEqual(decoded(plain));
      expect(kinds(plain)).toEqual(["event", "event", "caughtUp"]);
    });
  },
  { maxMessageBytes: 2048 },
);
