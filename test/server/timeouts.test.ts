import { once } from "node:events";
import http2 from "node:http2";
import net from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetUserStateRequestSchema, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { pgliteBackend } from "../support/backends.js";
import { envelope, RawCall, rawCall, SERVICE, VIA_CONNECT } from "../support/raw-grpc.js";
import { startTestServer, type TestServer } from "../support/server.js";

// A client must not hold a connection without asking anything: one that
// sends nothing, stalls inside its HTTP/1.1 headers or body, or keeps an
// HTTP/2 connection with no call open is closed after the configured time.
// Calls that are open, tails above all, keep their connection however long
// they run. The timeouts here are short so that the tests finish soon; each
// test waits for the connection's close (or for enough heartbeats), never
// for a fixed time.

const TIMEOUT_MS = 300;
/** Heartbeats at this interval, this many of them, span several timeouts. */
const HEARTBEAT_MS = 50;
const HEARTBEATS = Math.ceil((3 * TIMEOUT_MS) / HEARTBEAT_MS);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer(pgliteBackend, { headersTimeoutMs: TIMEOUT_MS, requestTimeoutMs: TIMEOUT_MS, idleTimeoutMs: TIMEOUT_MS });
});
afterAll(async () => {
  await t?.close();
});

/** A plain TCP connection to the server, and a promise of its close. */
async function connect(): Promise<{ socket: net.Socket; closed: Promise<unknown> }> {
  const socket = net.connect(t.server.port, "127.0.0.1");
  const closed = once(socket, "close");
  socket.on("error", () => {});
  await once(socket, "connect");
  return { socket, closed };
}

const h1Request = (body: string) =>
  `POST ${SERVICE}/GetUserState HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("connections that ask nothing", () => {
  it("closes a connection that never sends a byte", async () => {
    const { closed } = await connect();
    await closed;
  });

  it("closes a connection that stops inside the HTTP/2 preface", async () => {
    const { socket, closed } = await connect();
    socket.write("PRI * HTTP/2.0\r\n");
    await closed;
  });

  it("closes an HTTP/1.1 connection that stops inside its headers", async () => {
    const { socket, closed } = await connect();
    socket.write(`POST ${SERVICE}/GetUserState HTTP/1.1\r\nHost: x\r\nContent-Ty`);
    await closed;
  });

  it("closes a kept-alive HTTP/1.1 connection whose next request stops inside its headers", async () => {
    const { socket, closed } = await connect();
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
    });
    socket.write(h1Request(JSON.stringify({ appName: "a", userId: "u" })));
    while (!/\r\n\r\n\{.*\}/s.test(received)) await once(socket, "data");
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received.toLowerCase()).not.toContain("connection: close");
    socket.write("GET / HTTP/1.1\r\nHo");
    await closed;
  });

  it("closes an HTTP/1.1 connection whose request body stops arriving", async () => {
    const { socket, closed } = await connect();
    const full = h1Request(JSON.stringify({ appName: "a", userId: "u" }));
    socket.write(full.slice(0, full.length - 5));
    await closed;
  });

  it("resets an HTTP/2 call whose request body stops arriving, on both paths", async () => {
    const session = http2.connect(t.server.url);
    session.on("error", () => {});
    try {
      const body = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" })));
      for (const extra of [{}, VIA_CONNECT]) {
        const call = new RawCall(session, `${SERVICE}/GetUserState`, body.subarray(0, body.length - 3), extra, true);
        await call.done.then(
          () => undefined,
          () => undefined,
        );
        expect(call.status).toBeUndefined();
      }
    } finally {
      session.close();
    }
  });

  it("closes an HTTP/2 connection that opens no call, and one whose calls are over", async () => {
    const never = http2.connect(t.server.url);
    never.on("error", () => {});
    await once(never, "close");

    const used = http2.connect(t.server.url);
    used.on("error", () => {});
    const closed = once(used, "close");
    const body = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" })));
    expect((await rawCall(used, `${SERVICE}/GetUserState`, body)).status).toBe("0");
    await closed;
  });
});

describe("open calls", () => {
  const transports: { name: string; transport: () => Transport }[] = [
    { name: "gRPC over HTTP/2", transport: () => createGrpcTransport({ baseUrl: t.server.url }) },
    { name: "Connect over HTTP/1.1", transport: () => createConnectTransport({ baseUrl: t.server.url, httpVersion: "1.1" }) },
    { name: "gRPC-Web over HTTP/1.1", transport: () => createGrpcWebTransport({ baseUrl: t.server.url, httpVersion: "1.1" }) },
  ];

  for (const { name, transport } of transports) {
    it(`keep a tail and its heartbeats over ${name} open across several timeouts`, async () => {
      const client: Client<typeof SessionService> = createClient(SessionService, transport());
      await client.createSession({ appName: "tails", userId: "u", sessionId: name });
      const abort = new AbortController();
      let heartbeats = 0;
      const stream = client.streamEvents(
        { appName: "tails", userId: "u", sessionId: name, heartbeatInterval: { seconds: 0n, nanos: HEARTBEAT_MS * 1_000_000 } },
        { signal: abort.signal },
      );
      for await (const res of stream) {
        if (res.kind.case === "heartbeat") heartbeats++;
        if (heartbeats >= HEARTBEATS) break;
      }
      abort.abort();
      expect(heartbeats).toBe(HEARTBEATS);
      // The connection still serves.
      expect((await client.getUserState({ appName: "tails", userId: "u" })).state).toEqual({});
    });
  }
});
