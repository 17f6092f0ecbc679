import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, inject, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/ts/grpc/health/v1/health_pb.js";
import { GetUserStateRequestSchema, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { backends, type TestBackend } from "../support/backends.js";
import { expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { type LogLine, onLogLines } from "../support/log-lines.js";
import { createTestDatabase } from "../support/postgres.js";
import { envelope, RawCall, SERVICE } from "../support/raw-grpc.js";
import { startTestServer } from "../support/server.js";

// The real binary, started the way an operator starts it, stopped the way an
// orchestrator stops it (SIGTERM), and restarted on the same store.

interface ServerProcess {
  child: ChildProcess;
  /** Parsed JSON log lines; other stderr lines as { raw }. */
  logs: LogLine[];
  stdout(): string;
  stderr(): string;
  waitForLog(msg: string): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<ChildProcess>();

afterEach(async () => {
  // A failed test must not leave servers behind. The process group holds the
  // tsx wrapper and the server it runs, and nothing else.
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        continue; // exited in the meantime
      }
      await gone;
    }
  }
  started.clear();
});

function hermeticEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === "DATABASE_URL" || key.startsWith("SESSIONSTORE_")) continue;
    env[key] = value;
  }
  return { ...env, SESSIONSTORE_LOG_LEVEL: "info", ...extra };
}

function startProcess(args: string[], env: Record<string, string> = {}): ServerProcess {
  // detached: its own process group, so cleanup reaches the server behind tsx.
  const child = spawn("node_modules/.bin/tsx", ["src/main.ts", ...args], {
    env: hermeticEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  started.add(child);
  const logs: LogLine[] = [];
  const waiters: { msg: string; resolve: (line: LogLine) => void }[] = [];
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  onLogLines(child.stderr, (line) => {
    logs.push(line);
    for (const w of waiters.filter((w) => w.msg === line.msg)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    logs,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLog(msg) {
      const seen = logs.find((l) => l.msg === msg);
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<LogLine>((resolve) => waiters.push({ msg, resolve })),
        exited.then(({ code }) => {
          throw new Error(`server exited (${code}) before logging "${msg}":\n${err}`);
        }),
      ]);
    },
  };
}

async function listeningUrl(server: ServerProcess): Promise<string> {
  const line = await server.waitForLog("sessionstore listening");
  expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return line.url as string;
}

/** Where a backend keeps its data, as server flags; the same flags reopen the same store. */
async function storeFor(backend: TestBackend): Promise<{ args: string[]; remove(): Promise<void> }> {
  if (backend.name === "pglite") {
    const dir = mkdtempSync(join(tmpdir(), "sessionstore-shutdown-"));
    return { args: ["--data-dir", dir], remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const db = await createTestDatabase(inject("postgresAdminUrl"));
  return { args: ["--database-url", db.url], remove: db.drop };
}

// Long enough that the held call's body, sent as soon as the watcher sees
// NOT_SERVING, always beats it; a drain that hangs still ends the test soon.
const GRACE = { SESSIONSTORE_SHUTDOWN_GRACE_MS: "5000" };

interface HeldCall {
  /** Sends the request body and resolves with the response. */
  finish(): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: unknown }>;
}

/**
 * A Connect JSON call over HTTP/1.1 that the server is already handling but
 * cannot answer yet: with `Expect: 100-continue`, Node's server sends
 * "100 Continue" as it hands the request to the handler, and the body only
 * follows when we say so. This makes "a call in flight when SIGTERM arrives"
 * certain instead of a race.
 */
async function holdCall(url: string, method: string, message: unknown): Promise<HeldCall> {
  const payload = Buffer.from(JSON.stringify(message));
  const req = http.request(`${url}/sessionstore.v1.SessionService/${method}`, {
    method: "POST",
    agent: false,
    headers: { "content-type": "application/json", "content-length": payload.length, expect: "100-continue" },
  });
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: unknown }>((resolve, reject) => {
    req.once("error", reject);
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("error", reject);
      res.once("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
  });
  // Surfaced by finish(); until then a failure must not go unhandled.
  response.catch(() => {});
  req.flushHeaders();
  await Promise.race([new Promise<void>((resolve) => req.once("continue", resolve)), response.then(() => {})]);
  return {
    finish() {
      req.end(payload);
      return response;
    },
  };
}

/** A Watch whose statuses are recorded; `saw(status)` resolves once that status arrives. */
function watchHealth(url: string) {
  const client = createClient(Health, createGrpcTransport({ baseUrl: url }));
  const seen: Status[] = [];
  const waiting = new Map<Status, () => void>();
  const ended = (async () => {
    try {
      for await (const res of client.watch({ service: "" })) {
        seen.push(res.status);
        waiting.get(res.status)?.();
      }
      return undefined;
    } catch (err) {
      return err;
    }
  })();
  return {
    seen,
    ended,
    saw: (status: Status) =>
      seen.includes(status)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiting.set(status, resolve)),
            ended.then((err) => {
              throw new Error(`watch ended before ${Status[status]}: ${String(err)}`);
            }),
          ]),
  };
}

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`shutting down [${backend.name}]`, () => {
    it("drains on SIGTERM: watchers hear NOT_SERVING, an in-flight call completes, exit 0, and a restart finds the data", async () => {
      const store = await storeFor(backend);
      try {
        const first = startProcess(["--port", "0", ...store.args], GRACE);
        const url = await listeningUrl(first);
        const client = createClient(SessionService, createGrpcTransport({ baseUrl: url }));
        const key = { appName: unique("app"), userId: "u1", sessionId: "kept" };
        await client.createSession({ ...key, state: { "user:lang": "fr", plain: true } });
        await client.appendEvent({ ...key, event: { id: "e1", author: "user", actions: { stateDelta: { step: 1 } } } });

        const watch = watchHealth(url);
        await watch.saw(Status.SERVING);
        const held = await holdCall(url, "GetSession", key);

        first.child.kill("SIGTERM");
        await watch.saw(Status.NOT_SERVING);
        // The server is draining now, and the held call is still owed an answer.
        const answer = await held.finish();
        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({ session: { id: "kept", state: { "user:lang": "fr", plain: true, step: 1 }, revision: "1" } });
        // Keep-alive is over: the client is told not to reuse the connection.
        expect(answer.headers.connection).toBe("close");

        const ended = await watch.ended;
        if (ended !== undefined) expect(Code[(ended as { code: Code }).code]).toBe(Code[Code.Unavailable]);
        expect(watch.seen).toEqual([Status.SERVING, Status.NOT_SERVING]);

        expect(await first.exited).toEqual({ code: 0, signal: null });
        const messages = first.logs.map((l) => l.msg);
        expect(messages).toEqual(expect.arrayContaining(["signal received", "shutting down", "stopped"]));
        // Everything finished by itself: nothing was cut at the end of the grace period.
        expect(messages).not.toContain("grace period over, cancelling calls");

        const second = startProcess(["--port", "0", ...store.args], GRACE);
        const again = createClient(SessionService, createGrpcTransport({ baseUrl: await listeningUrl(second) }));
        const session = (await again.getSession(key)).session;
        expect(session?.state).toEqual({ "user:lang": "fr", plain: true, step: 1 });
        expect(session?.events.map((e) => e.id)).toEqual(["e1"]);
        expect((await again.getUserState(key)).state).toEqual({ lang: "fr" });
        second.child.kill("SIGTERM");
        expect(await second.exited).toEqual({ code: 0, signal: null });
      } finally {
        await store.remove();
      }
    });

    it("refuses to start on a port that is taken, saying so, and leaves the running server alone", async () => {
      const store = await storeFor(backend);
      // The point is the port, so the embedded intruder gets a throwaway store
      // in memory rather than a second process on the first one's files.
      const intruderStore = backend.name === "pglite" ? ["--data-dir", "memory://"] : store.args;
      try {
        const first = startProcess(["--port", "0", ...store.args], GRACE);
        const url = await listeningUrl(first);
        const port = new URL(url).port;

        const second = startProcess(["--port", port, ...intruderStore], GRACE);
        const { code } = await second.exited;
        expect(code).not.toBe(0);
        expect(code).not.toBeNull();
        expect(second.stderr()).toMatch(/failed to start/);
        expect(second.stderr()).toMatch(/EADDRINUSE|address already in use/);
        expect(second.stderr()).toContain(`:${port}`);

        const health = createClient(Health, createGrpcTransport({ baseUrl: url }));
        expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
        first.child.kill("SIGTERM");
        expect(await first.exited).toEqual({ code: 0, signal: null });
      } finally {
        await store.remove();
      }
    });

    it("closes idle HTTP/1.1 and HTTP/2 connections at once on close() while an in-flight call finishes", async () => {
      const own = await startTestServer(backend, { shutdownGraceMs: 30_000 });
      const { url } = own.server;
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await own.client.createSession(key);

      // An HTTP/1.1 connection kept alive after its call, as browsers keep them.
      const agent = new http.Agent({ keepAlive: true });
      const idleH1 = await new Promise<net.Socket>((resolve, reject) => {
        const req = http.request(`${url}/sessionstore.v1.SessionService/GetUserState`, {
          method: "POST",
          agent,
          headers: { "content-type": "application/json" },
        });
        let socket: net.Socket | undefined;
        req.once("socket", (s) => {
          socket = s;
        });
        req.once("error", reject);
        req.once("response", (res) => {
          expect(res.statusCode).toBe(200);
          res.resume();
          res.once("end", () => (socket ? resolve(socket) : reject(new Error("no socket"))));
        });
        req.end(JSON.stringify({ appName: "a", userId: "u" }));
      });
      const h1Closed = new Promise<void>((resolve) => idleH1.once("close", () => resolve()));

      // An HTTP/2 connection with no stream open.
      const idleH2 = http2.connect(url);
      idleH2.on("error", () => {});
      await new Promise<void>((resolve, reject) => {
        const stream = idleH2.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc" });
        stream.once("error", reject);
        stream.resume();
        stream.once("close", () => resolve());
        stream.end(Buffer.alloc(5));
      });
      const h2GoAway = new Promise<void>((resolve) => idleH2.once("goaway", () => resolve()));
      const h2Closed = new Promise<void>((resolve) => idleH2.once("close", () => resolve()));

      const held = await holdCall(url, "GetSession", key);
      const closing = own.close();
      // Both idle connections go while the held call is still unanswered: close()
      // waits for calls, not for connections that merely stay open.
      await Promise.all([h1Closed, h2GoAway, h2Closed]);
      const answer = await held.finish();
      expect(answer.status).toBe(200);
      expect(answer.headers.connection).toBe("close");
      expect(answer.body).toMatchObject({ session: { id: "s" } });
      await closing;
      await own.database.close();
      agent.destroy();

      const fresh = createClient(Health, createGrpcTransport({ baseUrl: url }));
      await expectCode(fresh.check({ service: "" }), Code.Unavailable);
    });

    it("answers a gRPC call still receiving its request when the grace period ends with UNAVAILABLE", async () => {
      const own = await startTestServer(backend, { shutdownGraceMs: 200 });
      const session = http2.connect(own.server.url);
      session.on("error", () => {});
      try {
        // Half an envelope: the call waits for the rest of its request.
        const request = envelope(toBinary(GetUserStateRequestSchema, create(GetUserStateRequestSchema, { appName: "a", userId: "u" })));
        const held = new RawCall(session, `${SERVICE}/GetUserState`, request.subarray(0, 3), {}, true);
        await new Promise((r) => setTimeout(r, 100));
        const closing = own.close();
        await held.answered;
        expect(Code[Number(held.headers["grpc-status"])]).toBe(Code[Code.Unavailable]);
        expect(decodeURIComponent(String(held.headers["grpc-message"]))).toMatch(/shutting down/);
        held.cancel();
        await closing;
      } finally {
        session.close();
        await own.database.close();
      }
    });
  });
}

describe("the command line", () => {
  it("prints usage for --help on stdout and exits 0", async () => {
    const server = startProcess(["--help"]);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toMatch(/^usage: sessionstore/);
    for (const name of ["--port", "SESSIONSTORE_PORT", "--data-dir", "DATABASE_URL", "SESSIONSTORE_SHUTDOWN_GRACE_MS"]) {
      expect(server.stdout()).toContain(name);
    }
  });

  it("exits 2 naming the variable when the configuration is bad", async () => {
    const server = startProcess([], { SESSIONSTORE_PORT: "abc" });
    expect(await server.exited).toEqual({ code: 2, signal: null });
    expect(server.stderr()).toMatch(/SESSIONSTORE_PORT/);
    expect(server.stderr()).toMatch(/"abc"/);
    expect(server.logs.map((l) => l.msg)).not.toContain("sessionstore listening");
  });

  it("exits 2 with usage for an unknown flag and for a flag without its value", async () => {
    const unknown = startProcess(["--prot", "1"]);
    expect(await unknown.exited).toEqual({ code: 2, signal: null });
    expect(unknown.stderr()).toMatch(/unknown option --prot/);
    expect(unknown.stderr()).toMatch(/sessionstore serve --help/);

    const missing = startProcess(["--port"]);
    expect(await missing.exited).toEqual({ code: 2, signal: null });
    expect(missing.stderr()).toMatch(/--port needs a value/);
  });
});
