import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateSessionRequestSchema,
  CreateSessionResponseSchema,
  GetSessionRequestSchema,
  GetSessionResponseSchema,
  GetUserStateRequestSchema,
  SessionService,
  StreamEventsRequestSchema,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { encodeGrpcMessage } from "../../src/rpc/grpc-message.js";
import { UNNAMED_COMPRESSION } from "../../src/rpc/parse-errors.js";
import { pgliteBackend } from "../support/backends.js";
import { expectCode } from "../support/contract.js";
import { codec } from "../support/grpc-js.js";
import { envelope, type RawCall, rawCall, SERVICE, VIA_CONNECT } from "../support/raw-grpc.js";
import { startTestServer, type TestServer } from "../support/server.js";

// How a status travels on each protocol and path: a message flagged
// compressed in a request that names no encoding is the client's error
// (INVALID_ARGUMENT) everywhere, and grpc-message is percent-encoded as the
// gRPC spec says (only bytes outside printable ASCII, and `%`), on the fast
// path and on Connect's, so every gRPC library reads it as written.

/** Every character an encoder can get wrong: `%`, URI delimiters, spaces, non-ASCII. */
const ODD_ID = "naïve 100%,a=b;c/d?e#f&g+h:i@j$k ✓ 日本";
const oddMessage = (appName: string) => `session "${ODD_ID}" not found for app "${appName}" and user "u"`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer(pgliteBackend, { policy: JSON.stringify({ defaults: { limits: { maxStateBytes: 64 } } }) });
});
afterAll(async () => {
  await t?.close();
});

const getUserState = () => toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" }));

/** An HTTP/1.1 POST; the whole answer body. */
async function post(path: string, contentType: string, body: Uint8Array): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(`${t.server.url}${path}`, { method: "POST", headers: { "content-type": contentType }, body });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** The enveloped messages of a gRPC-Web or Connect streaming body. */
function frames(body: Buffer): { flags: number; data: Buffer }[] {
  const out: { flags: number; data: Buffer }[] = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const length = body.readUInt32BE(at + 1);
    out.push({ flags: body[at] as number, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

/** gRPC-Web's trailer message, as raw header lines. */
function webTrailer(body: Buffer): Record<string, string> {
  const trailer = frames(body).find((f) => f.flags & 0x80);
  if (!trailer) throw new Error("no trailer message");
  const out: Record<string, string> = {};
  for (const line of trailer.data.toString("utf8").split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

describe("a message flagged compressed without a named encoding", () => {
  const compressed = () => Buffer.from(encodeEnvelope(1, gzipSync(getUserState())));

  it("is INVALID_ARGUMENT on gRPC's fast path, saying why", async () => {
    const session = http2.connect(t.server.url);
    try {
      const fast = await rawCall(session, `${SERVICE}/GetUserState`, compressed());
      expect(Code[Number(fast.status)]).toBe(Code[Code.InvalidArgument]);
      expect(fast.message).toBe(UNNAMED_COMPRESSION);
      // grpc-encoding: identity names no compression either.
      const identity = await rawCall(session, `${SERVICE}/GetUserState`, compressed(), { "grpc-encoding": "identity" });
      expect({ status: identity.status, message: identity.message }).toEqual({ status: fast.status, message: fast.message });
      // Named, it is decompressed, and it works.
      expect((await rawCall(session, `${SERVICE}/GetUserState`, compressed(), VIA_CONNECT)).status).toBe("0");
    } finally {
      session.close();
    }
  });

  it("is INVALID_ARGUMENT on gRPC through Connect", async () => {
    const session = http2.connect(t.server.url);
    try {
      // grpc+json is not the fast path's: Connect reads it, and finds the flag before the body.
      const answer = await rawCall(session, `${SERVICE}/GetUserState`, compressed(), { "content-type": "application/grpc+json" });
      expect(Code[Number(answer.status)]).toBe(Code[Code.InvalidArgument]);
      expect(answer.message).toBe(UNNAMED_COMPRESSION);
      // A server stream too (the fast path takes binary streams, Connect this one).
      const stream = create(StreamEventsRequestSchema, { appName: "a", userId: "u", sessionId: "s" });
      const body = Buffer.from(encodeEnvelope(1, gzipSync(toBinary(StreamEventsRequestSchema, stream))));
      for (const extra of [{}, { "content-type": "application/grpc+json" }]) {
        const tail = await rawCall(session, `${SERVICE}/StreamEvents`, body, extra);
        expect({ status: Code[Number(tail.status)], message: tail.message }).toEqual({
          status: Code[Code.InvalidArgument],
          message: UNNAMED_COMPRESSION,
        });
      }
    } finally {
      session.close();
    }
  });

  it("is INVALID_ARGUMENT on gRPC-Web", async () => {
    const res = await post(`${SERVICE}/GetUserState`, "application/grpc-web+proto", compressed());
    expect(res.status).toBe(200);
    const trailer = webTrailer(res.body);
    expect(trailer["grpc-status"]).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(trailer["grpc-message"] ?? "")).toBe(UNNAMED_COMPRESSION);
  });

  it("is invalid_argument on Connect streaming", async () => {
    const stream = create(StreamEventsRequestSchema, { appName: "a", userId: "u", sessionId: "s" });
    const body = Buffer.from(encodeEnvelope(1, gzipSync(toBinary(StreamEventsRequestSchema, stream))));
    const res = await post(`${SERVICE}/StreamEvents`, "application/connect+proto", body);
    const end = frames(res.body).find((f) => f.flags & 0x02);
    expect(JSON.parse(end?.data.toString("utf8") ?? "{}")).toEqual({ error: { code: "invalid_argument", message: UNNAMED_COMPRESSION } });
  });
});

describe("grpc-message", () => {
  it("encodes like the gRPC spec: only bytes outside printable ASCII, and %", () => {
    expect(encodeGrpcMessage("a,b=c;d %e")).toBe("a,b=c;d %25e");
    expect(encodeGrpcMessage("naïve ✓")).toBe("na%C3%AFve %E2%9C%93");
    expect(encodeGrpcMessage("line\nbreak\t\x7f")).toBe("line%0Abreak%09%7F");
    // HTTP trims a value's surrounding spaces; these must survive.
    expect(encodeGrpcMessage(" padded ")).toBe("%20padded%20");
  });

  it("goes out in that encoding on the fast path and through Connect, over gRPC and gRPC-Web", async () => {
    const appName = "wire-app";
    const expected = oddMessage(appName);
    const body = envelope(toBinary(GetSessionRequestSchema, create(GetSessionRequestSchema, { appName, userId: "u", sessionId: ODD_ID })));
    const session = http2.connect(t.server.url);
    try {
      for (const extra of [{}, VIA_CONNECT]) {
        const answer: RawCall = await rawCall(session, `${SERVICE}/GetSession`, body, extra);
        expect(answer.status).toBe(String(Code.NotFound));
        expect(answer.headers["grpc-message"]).toBe(encodeGrpcMessage(expected));
        expect(answer.headers["grpc-message"]).toContain("na%C3%AFve 100%25,a=b;c/d?e#f&g+h:i@j$k %E2%9C%93");
      }
    } finally {
      session.close();
    }
    const web = await post(`${SERVICE}/GetSession`, "application/grpc-web+proto", body);
    expect(webTrailer(web.body)["grpc-message"]).toBe(encodeGrpcMessage(expected));
  });

  it("reaches @grpc/grpc-js exactly as written, on the fast path and through Connect", async () => {
    const client = new grpc.Client(`${t.server.host}:${t.server.port}`, grpc.credentials.createInsecure());
    try {
      const req = codec(GetSessionRequestSchema);
      const res = codec(GetSessionResponseSchema);
      const call = (metadata: grpc.Metadata, sessionId: string) =>
        new Promise<grpc.ServiceError>((resolve, reject) => {
          client.makeUnaryRequest(
            `${SERVICE}/GetSession`,
            req.serialize,
            res.deserialize,
            { appName: "wire-app", userId: "u", sessionId },
            metadata,
            {},
            (err) => (err ? resolve(err) : reject(new Error("the call succeeded"))),
          );
        });
      const fast = await call(new grpc.Metadata(), ODD_ID);
      expect({ code: grpc.status[fast.code], details: fast.details }).toEqual({ code: "NOT_FOUND", details: oddMessage("wire-app") });
      // A request that grpc-js compresses goes to Connect.
      const zipped = new grpc.Client(`${t.server.host}:${t.server.port}`, grpc.credentials.createInsecure(), {
        "grpc.default_compression_algorithm": 2,
      });
      try {
        const viaConnect = await new Promise<grpc.ServiceError>((resolve, reject) => {
          zipped.makeUnaryRequest(
            `${SERVICE}/GetSession`,
            req.serialize,
            res.deserialize,
            { appName: "wire-app", userId: "u", sessionId: ODD_ID },
            new grpc.Metadata(),
            {},
            (err) => (err ? resolve(err) : reject(new Error("the call succeeded"))),
          );
        });
        expect(viaConnect.details).toBe(oddMessage("wire-app"));
      } finally {
        zipped.close();
      }
    } finally {
      client.close();
    }
  });

  it("reaches @grpc/grpc-js intact for the state-over-limit message", async () => {
    const client = new grpc.Client(`${t.server.host}:${t.server.port}`, grpc.credentials.createInsecure());
    try {
      const err = await new Promise<grpc.ServiceError>((resolve, reject) => {
        client.makeUnaryRequest(
          `${SERVICE}/CreateSession`,
          codec(CreateSessionRequestSchema).serialize,
          codec(CreateSessionResponseSchema).deserialize,
          { appName: "wire-app", userId: "u", state: { big: "x".repeat(100) } },
          new grpc.Metadata(),
          {},
          (e) => (e ? resolve(e) : reject(new Error("the call succeeded"))),
        );
      });
      expect(grpc.status[err.code]).toBe("RESOURCE_EXHAUSTED");
      expect(err.details).toMatch(/^.* would be \d+, over the limit maxStateBytes = 64; nothing was written$/);
    } finally {
      client.close();
    }
  });

  it("reaches Connect's own clients exactly as written, over every protocol", async () => {
    const transports = [
      createGrpcTransport({ baseUrl: t.server.url }),
      createGrpcTransport({ baseUrl: t.server.url, sendCompression: undefined, useBinaryFormat: false }),
      createGrpcWebTransport({ baseUrl: t.server.url, httpVersion: "1.1" }),
      createConnectTransport({ baseUrl: t.server.url, httpVersion: "1.1" }),
    ];
    for (const transport of transports) {
      const client = createClient(SessionService, transport);
      const err = await expectCode(client.getSession({ appName: "wire-app", userId: "u", sessionId: ODD_ID }), Code.NotFound);
      expect(err.rawMessage).toBe(oddMessage("wire-app"));
    }
  });
});
