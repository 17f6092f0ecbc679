import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { pgliteBackend } from "../support/backends.js";
import { expectCode } from "../support/contract.js";
import { startTestServer, type TestServer } from "../support/server.js";

describe("TLS", () => {
  let dir: string;
  let ca: Buffer;
  let t: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sessionstore-tls-"));
    // A throwaway self-signed certificate for 127.0.0.1.
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    ca = readFileSync(join(dir, "cert.pem"));
    t = await startTestServer(pgliteBackend, { tlsCert: join(dir, "cert.pem"), tlsKey: join(dir, "key.pem"), headersTimeoutMs: 500 });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves gRPC over HTTP/2 and Connect over HTTP/1.1 on one TLS port", async () => {
    expect(t.server.url).toMatch(/^https:\/\//);
    const grpc = createClient(SessionService, createGrpcTransport({ baseUrl: t.server.url, nodeOptions: { ca } }));
    const created = await grpc.createSession({ appName: "tls", userId: "u1" });
    const h1 = createClient(SessionService, createConnectTransport({ baseUrl: t.server.url, httpVersion: "1.1", nodeOptions: { ca } }));
    const got = await h1.getSession({ appName: "tls", userId: "u1", sessionId: created.session?.id as string });
    expect(got.session?.id).toBe(created.session?.id);
  });

  it("refuses a client that does not trust the certificate", async () => {
    const untrusting = createClient(SessionService, createGrpcTransport({ baseUrl: t.server.url }));
    await expect(untrusting.getUserState({ appName: "tls", userId: "u1" })).rejects.toThrow(/certificate/i);
  });

  it("closes a connection that never starts or never finishes its handshake (SESSIONSTORE_HEADERS_TIMEOUT_MS)", async () => {
    for (const first of ["", "\x16\x03\x01"]) {
      const socket = net.connect(t.server.port, "127.0.0.1");
      socket.on("error", () => {});
      const closed = once(socket, "close");
      await once(socket, "connect");
      if (first) socket.write(Buffer.from(first, "latin1"));
      await closed;
    }
  });

  // Last: it stops the server.
  it("drains gracefully: a tail over TLS ends with the server's status, not a cut connection", async () => {
    const grpc = createClient(SessionService, createGrpcTransport({ baseUrl: t.server.url, nodeOptions: { ca } }));
    await grpc.createSession({ appName: "tls", userId: "u1", sessionId: "drained" });
    const tail = grpc.streamEvents({ appName: "tls", userId: "u1", sessionId: "drained" })[Symbol.asyncIterator]();
    while (!(await tail.next()).value?.kind.case?.startsWith("caught")) {}
    const closing = t.server.close();
    await expectCode(tail.next(), Code.Unavailable, /server shutting down; resume from the last cursor/);
    await closing;
  });
});
