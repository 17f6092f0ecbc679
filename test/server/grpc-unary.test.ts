import type http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect, it } from "vitest";
import {
  AppendEventRequestSchema,
  AppendEventResponseSchema,
  CreateSessionRequestSchema,
  GetSessionRequestSchema,
  GetSessionResponseSchema,
  GetUserStateRequestSchema,
  GetUserStateResponseSchema,
  ListEventsRequestSchema,
  ListEventsResponseSchema,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { envelope, only, RawCall, rawCall, rawSession, SERVICE, VIA_CONNECT } from "../support/raw-grpc.js";

// Unary gRPC calls with a binary, uncompressed body are served by the
// server's own handler (src/server/grpc/); everything else by Connect. The
// same bytes go down both paths (support/raw-grpc.ts): every answer must be
// the same.

describeContract(
  "unary gRPC fast path",
  (t) => {
    const session = rawSession(() => t().server.url);

    const call = (path: string, body: Uint8Array, extra: http2.OutgoingHttpHeaders = {}) => rawCall(session(), path, body, extra);

    /** The same request down both paths; the answers must agree. */
    async function both(path: string, body: Uint8Array): Promise<RawCall> {
      const fast = await call(path, body);
      const viaConnect = await call(path, body, VIA_CONNECT);
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
      return fast;
    }

    it("answers a call as Connect does", async () => {
      const appName = unique("app");
      await t().client.createSession({ appName, userId: "u", sessionId: "s", state: { "user:tier": "gold" } });
      const request = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName, userId: "u" })));
      const answer = await both(`${SERVICE}/GetUserState`, request);
      expect(answer.status).toBe("0");
      expect(answer.headers["content-type"]).toBe("application/grpc+proto");
      expect(fromBinary(GetUserStateResponseSchema, only(answer)).state).toEqual({ tier: "gold" });
    });

    it("answers an append with the event exactly as stored, on both paths", async () => {
      // The fast path sends the stored bytes of the event instead of encoding it again.
      const appName = unique("app");
      const key = { appName, userId: "u", sessionId: "s" };
      await t().client.createSession(key);
      const request = create(AppendEventRequestSchema, {
        ...key,
        event: {
          author: "agent",
          content: { parts: [{ data: { case: "text", value: "héllo" } }] },
          actions: { stateDelta: { "user:n": 1, turn: 2 } },
        },
      });
      const fast = await call(`${SERVICE}/AppendEvent`, envelope(toBinary(AppendEventRequestSchema, request)));
      expect(fast.status).toBe("0");
      const answered = fromBinary(AppendEventResponseSchema, only(fast));
      const stored = (await t().client.getSession(key)).session?.events[0];
      expect(answered.event).toEqual(stored);
      expect(answered).toMatchObject({ revision: 1n, stored: true, duplicate: false });
      expect(answered.event?.seq).toBe(1n);
      expect(answered.event?.timestamp).toBeDefined();

      // The same event again: a duplicate, answered alike down both paths.
      const again = create(AppendEventRequestSchema, { ...key, event: answered.event });
      for (const extra of [{}, VIA_CONNECT]) {
        const dup = await call(`${SERVICE}/AppendEvent`, envelope(toBinary(AppendEventRequestSchema, again)), extra);
        const decoded = fromBinary(AppendEventResponseSchema, only(dup));
        expect(decoded).toMatchObject({ revision: 1n, stored: true, duplicate: true });
        expect(decoded.event).toEqual(stored);
      }
    });

    it("answers GetSession and ListEvents from the stored bytes, as Connect would", async () => {
      const appName = unique("app");
      const key = { appName, userId: "u", sessionId: "s" };
      await t().client.createSession({ ...key, state: { "app:region": "eu", "user:tier": "gold", topic: "orders" } });
      for (const [i, text] of ["first", "zweite Nachricht ✓", ""].entries()) {
        await t().client.appendEvent({
          ...key,
          event: {
            author: i % 2 ? "agent" : "user",
            content: { parts: [{ data: { case: "text", value: text } }] },
            actions: { stateDelta: { turn: i } },
          },
        });
      }
      const calls = [
        {
          path: `${SERVICE}/GetSession`,
          body: toBinary(GetSessionRequestSchema, create(GetSessionRequestSchema, { ...key, numRecentEvents: 2 })),
          decode: (b: Uint8Array) => fromBinary(GetSessionResponseSchema, b),
        },
        {
          path: `${SERVICE}/ListEvents`,
          body: toBinary(ListEventsRequestSchema, create(ListEventsRequestSchema, { ...key, pageSize: 2 })),
          decode: (b: Uint8Array) => fromBinary(ListEventsResponseSchema, b),
        },
      ];
      for (const c of calls) {
        const fast = await call(c.path, envelope(c.body));
        const viaConnect = await call(c.path, envelope(c.body), VIA_CONNECT);
        expect(fast.status).toBe("0");
        expect(c.decode(only(fast))).toEqual(c.decode(only(viaConnect)));
      }
      const session = fromBinary(
        GetSessionResponseSchema,
        only(await call(calls[0]?.path ?? "", envelope(calls[0]?.body ?? new Uint8Array()))),
      ).session;
      expect(session?.events.map((e) => e.seq)).toEqual([2n, 3n]);
      expect(session?.state).toEqual({ "app:region": "eu", "user:tier": "gold", topic: "orders", turn: 2 });
    });

    it("gives the same status and message for every kind of bad request", async () => {
      const missing = create(GetSessionRequestSchema, { appName: "a", userId: "u", sessionId: unique("none") });
      const cases: { name: string; path: string; body: Uint8Array; code: Code }[] = [
        {
          name: "not found",
          path: `${SERVICE}/GetSession`,
          body: envelope(toBinary(GetSessionRequestSchema, missing)),
          code: Code.NotFound,
        },
        {
          name: "invalid field",
          path: `${SERVICE}/CreateSession`,
          body: envelope(toBinary(CreateSessionRequestSchema, create(CreateSessionRequestSchema, { appName: "", userId: "u" }))),
          code: Code.InvalidArgument,
        },
        {
          name: "not protobuf",
          path: `${SERVICE}/GetSession`,
          body: envelope(Buffer.from([0xff, 0xff, 0xff, 0xff])),
          code: Code.InvalidArgument,
        },
        { name: "no message", path: `${SERVICE}/GetSession`, body: new Uint8Array(0), code: Code.Unimplemented },
        {
          name: "two messages",
          path: `${SERVICE}/GetSession`,
          body: Buffer.concat([envelope(new Uint8Array(0)), envelope(new Uint8Array(0))]),
          code: Code.Unimplemented,
        },
        {
          name: "cut envelope",
          path: `${SERVICE}/GetSession`,
          body: envelope(Buffer.alloc(10)).subarray(0, 8),
          code: Code.InvalidArgument,
        },
        { name: "short header", path: `${SERVICE}/GetSession`, body: Buffer.from([0, 0, 0]), code: Code.InvalidArgument },
      ];
      for (const c of cases) {
        const answer = await both(c.path, c.body);
        expect(Code[Number(answer.status)], `${c.name}: ${answer.message}`).toBe(Code[c.code]);
        expect(answer.message, c.name).toBeTruthy();
      }
    });

    it("refuses a compressed message whose encoding was not named", async () => {
      const body = envelope(
        gzipSync(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" }))),
        1,
      );
      const answer = await call(`${SERVICE}/GetUserState`, body);
      expect(Code[Number(answer.status)]).toBe(Code[Code.InvalidArgument]);
      expect(answer.message).toMatch(/flagged compressed, but the request names no encoding/);
      // Named, it is Connect's to decompress, and it works.
      expect((await call(`${SERVICE}/GetUserState`, body, VIA_CONNECT)).status).toBe("0");
    });

    it("refuses a bad deadline header as Connect does", async () => {
      const body = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" })));
      const fast = await call(`${SERVICE}/GetUserState`, body, { "grpc-timeout": "soon" });
      const viaConnect = await call(`${SERVICE}/GetUserState`, body, { "grpc-timeout": "soon", ...VIA_CONNECT });
      expect(fast.status).not.toBe("0");
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
    });

    it("gzips large answers only for clients that accept gzip", async () => {
      const appName = unique("app");
      const big = "x".repeat(1500);
      await t().client.createSession({ appName, userId: "u", sessionId: "s", state: { big } });
      const body = envelope(toBinary(GetSessionRequestSchema, create(GetSessionRequestSchema, { appName, userId: "u", sessionId: "s" })));
      const plain = await call(`${SERVICE}/GetSession`, body);
      expect(plain.frames[0]?.flags).toBe(0);
      expect(plain.headers["grpc-encoding"]).toBeUndefined();
      const zipped = await call(`${SERVICE}/GetSession`, body, { "grpc-accept-encoding": "identity, gzip" });
      expect(zipped.frames[0]?.flags).toBe(1);
      expect(zipped.headers["grpc-encoding"]).toBe("gzip");
      expect(zipped.frames[0]?.raw.length).toBeLessThan(plain.frames[0]?.raw.length ?? 0);
      for (const answer of [plain, zipped]) {
        expect(fromBinary(GetSessionResponseSchema, only(answer)).session?.state).toEqual({ big });
      }
    });

    it("refuses a second message at once, without holding what else the client sends", async () => {
      // One small message, then 64 KiB of zeros (empty envelopes), and the
      // request left open: the answer must not wait for the body to end.
      const first = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" })));
      const body = Buffer.concat([first, Buffer.alloc(64 * 1024)]);
      const answers: RawCall[] = [];
      for (const extra of [{}, VIA_CONNECT]) {
        const open = new RawCall(session(), `${SERVICE}/GetUserState`, body, extra, true);
        await open.answered;
        open.cancel();
        answers.push(await open.done);
      }
      const [fast, viaConnect] = answers as [RawCall, RawCall];
      expect(Code[Number(fast.status)]).toBe(Code[Code.Unimplemented]);
      expect(fast.message).toMatch(/extra input message/);
      expect({ status: fast.status, message: fast.message }).toEqual({ status: viaConnect.status, message: viaConnect.message });
    }, 15_000);

    it("ends a call whose deadline passes while its request is still arriving with DEADLINE_EXCEEDED", async () => {
      const request = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" })));
      const held = new RawCall(session(), `${SERVICE}/GetUserState`, request.subarray(0, 3), { "grpc-timeout": "300m" }, true);
      await held.answered;
      held.cancel();
      await held.done;
      expect(Code[Number(held.status)]).toBe(Code[Code.DeadlineExceeded]);
      expect(held.message).toMatch(/timed out/);
    }, 15_000);

    it("refuses a message over the size limit before reading it", async () => {
      const header = Buffer.from([0, 0, 0, 0x10, 0]); // promises 4,096 bytes
      const answer = await both(`${SERVICE}/GetSession`, Buffer.concat([header, Buffer.alloc(4096)]));
      expect(Code[Number(answer.status)]).toBe(Code[Code.ResourceExhausted]);
      expect(answer.message).toMatch(/larger than configured readMaxBytes 2048/);
    });
  },
  { maxMessageBytes: 2048 },
);
