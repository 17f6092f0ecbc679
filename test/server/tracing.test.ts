import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { hashToken, newToken } from "../../src/auth/tokens.js";
import { backends, type TestBackend } from "../support/backends.js";
import { unique } from "../support/ids.js";
import { type LogLine, onLogLines } from "../support/log-lines.js";
import { OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { createTestDatabase } from "../support/postgres.js";

// Traces end to end: the real binary with the standard OTEL_* variables
// pointing at a receiver in this process, called with a W3C traceparent on
// every protocol it speaks; and the same binary without them, which must
// load no SDK and export nothing.

interface ServerProcess {
  child: ChildProcess;
  logs: LogLine[];
  url: Promise<string>;
  /** The exit code, once the process has ended and its output is read. */
  exited: Promise<number | null>;
  /** The first log line (so far or later) that matches. */
  waitForLog(match: (line: LogLine) => boolean): Promise<LogLine>;
  /** The @opentelemetry modules the process resolved. */
  imports(): string[];
}

/** Cleanups of what a test started; a suite's shared server has its own list. */
type Cleanups = (() => Promise<void> | void)[];

const started = new Set<ChildProcess>();
const cleanups: Cleanups = [];

/** Kills the process group (the tsx wrapper and the server behind it), and nothing else. */
async function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    return;
  }
  await gone;
}

afterEach(async () => {
  for (const child of started) await killGroup(child);
  started.clear();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function startServer(args: string[], env: Record<string, string>, owner: Cleanups = cleanups): ServerProcess {
  const dir = mkdtempSync(join(tmpdir(), "sessionstore-tracing-"));
  owner.push(() => rmSync(dir, { recursive: true, force: true }));
  const importsLog = join(dir, "imports.log");
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === "DATABASE_URL" || key.startsWith("SESSIONSTORE_") || key.startsWith("OTEL_")) continue;
    base[key] = value;
  }
  const recorder = resolve("test/support/record-imports.mjs");
  const child = spawn("node_modules/.bin/tsx", ["src/main.ts", "--port", "0", ...args], {
    env: {
      ...base,
      NODE_OPTIONS: `${base.NODE_OPTIONS ?? ""} --import=${recorder}`,
      SESSIONSTORE_TEST_IMPORTS_LOG: importsLog,
      SESSIONSTORE_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  if (owner === cleanups) started.add(child);
  else owner.push(() => killGroup(child));
  const logs: LogLine[] = [];
  let stderr = "";
  let listening: (url: string) => void = () => {};
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const arrived: (() => void)[] = [];
  void exited.then(() => {
    for (const wake of arrived.splice(0)) wake();
  });
  const url = new Promise<string>((resolve, reject) => {
    listening = resolve;
    exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${stderr}`)));
  });
  url.catch(() => {});
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  onLogLines(child.stderr, (line) => {
    logs.push(line);
    if (line.msg === "sessionstore listening") listening(line.url as string);
    for (const wake of arrived.splice(0)) wake();
  });
  return {
    child,
    logs,
    url,
    exited,
    async waitForLog(match) {
      for (;;) {
        const found = logs.find(match);
        if (found) return found;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server ended without that log line:\n${stderr}`);
        await new Promise<void>((resolve) => arrived.push(resolve));
      }
    },
    imports: () => {
      try {
        return readFileSync(importsLog, "utf8").split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
  };
}

async function storeArgs(backend: TestBackend, owner: Cleanups = cleanups): Promise<string[]> {
  if (backend.name === "pglite") return ["--data-dir", "memory://"];
  const db = await createTestDatabase(inject("postgresAdminUrl"));
  owner.push(db.drop);
  return ["--database-url", db.url];
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

/** A caller's trace: its ids and the headers that carry them. */
function callerTrace() {
  const traceId = hex(16);
  const parentId = hex(8);
  const requestId = `req-${hex(6)}`;
  return {
    traceId,
    parentId,
    requestId,
    headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: "vendor=abc", "x-request-id": requestId },
  };
}

const PROTOCOLS: { name: string; system: string; transport: (url: string) => Transport }[] = [
  { name: "gRPC (fast path)", system: "grpc", transport: (url) => createGrpcTransport({ baseUrl: url }) },
  {
    name: "gRPC (compressed, via Connect)",
    system: "grpc",
    transport: (url) => createGrpcTransport({ baseUrl: url, sendCompression: compressionGzip, compressMinBytes: 0 }),
  },
  { name: "Connect", system: "connect_rpc", transport: (url) => createConnectTransport({ baseUrl: url, httpVersion: "1.1" }) },
  { name: "gRPC-Web", system: "grpc", transport: (url) => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }) },
];

const SECRET = newToken();
const TOKENS = JSON.stringify({ tokens: [{ name: "traced", sha256: hashToken(SECRET), apps: ["traced"] }] });
const bearer: Interceptor = (next) => (req) => {
  req.header.set("authorization", `Bearer ${SECRET}`);
  return next(req);
};

const POLICY = JSON.stringify({ apps: { traced: { limits: { maxEventsPerSession: 100, warnRatio: 0.01 } } } });

describe.each(backends())("traces ($name)", (backend) => {
  const receiver = new OtlpReceiver();
  // One traced server for the tests that only call it (starting one is the slow part).
  let shared: { server: ServerProcess; url: string } | undefined;
  const suiteCleanups: Cleanups = [];
  beforeAll(async () => {
    await receiver.start();
    if (backend.available) shared = await tracedServer({}, suiteCleanups);
  });
  afterAll(async () => {
    // The server first: it holds the database the next cleanup drops.
    for (const cleanup of suiteCleanups.reverse()) await cleanup();
    await receiver.close();
  });
  const sharedServer = () => {
    if (!shared) throw new Error("no traced server");
    return shared;
  };

  async function tracedServer(
    env: Record<string, string> = {},
    owner: Cleanups = cleanups,
  ): Promise<{ server: ServerProcess; url: string }> {
    const args = await storeArgs(backend, owner);
    const env0 = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "sessionstore-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "50",
      SESSIONSTORE_POLICY: POLICY,
      ...env,
    };
    const server = startServer(args, env0, owner);
    return { server, url: await server.url };
  }

  const spanOf = (caller: ReturnType<typeof callerTrace>, name: string) => (s: ReceivedSpan) =>
    s.traceId === caller.traceId && s.name === name;

  it.skipIf(!backend.available)("a call with a traceparent is a server span of that trace, on every protocol", async () => {
    const { server, url } = sharedServer();
    for (const protocol of PROTOCOLS) {
      const client = createClient(SessionService, protocol.transport(url));
      const caller = callerTrace();
      let echoed: string | null = null;
      await client.getUserState(
        { appName: "traced", userId: unique("u") },
        { headers: caller.headers, onHeader: (h) => (echoed = h.get("x-request-id")) },
      );
      expect(echoed, protocol.name).toBe(caller.requestId);
      const span = await receiver.waitFor(protocol.name, spanOf(caller, "sessionstore.v1.SessionService/GetUserState"));
      expect(span.parentSpanId, protocol.name).toBe(caller.parentId);
      expect(span.traceState, protocol.name).toBe("vendor=abc");
      expect(span.kind, protocol.name).toBe(2); // SERVER
      expect(span.attributes, protocol.name).toMatchObject({
        "rpc.system": protocol.system,
        "rpc.service": "sessionstore.v1.SessionService",
        "rpc.method": "GetUserState",
        "sessionstore.request_id": caller.requestId,
      });
      if (protocol.system === "grpc") expect(span.attributes["rpc.grpc.status_code"], protocol.name).toBe(0);
      expect(span.resource["service.name"]).toBe("sessionstore-under-test");
      // The read's SQL is the call's child.
      const sql = await receiver.waitFor(`${protocol.name} SQL`, (s) => s.traceId === caller.traceId && s.parentSpanId === span.spanId);
      expect(sql.attributes["db.system.name"]).toBe("postgresql");
    }
    // A failed call says how: NOT_FOUND is the caller's, so the span is not an error.
    const caller = callerTrace();
    const client = createClient(SessionService, createGrpcTransport({ baseUrl: url }));
    await expect(client.getSession({ appName: "traced", userId: "u", sessionId: "missing" }, { headers: caller.headers })).rejects.toThrow(
      /not found/i,
    );
    const failed = await receiver.waitFor("failed call", spanOf(caller, "sessionstore.v1.SessionService/GetSession"));
    expect(failed.attributes["rpc.grpc.status_code"]).toBe(5);
    expect(failed.status.code ?? 0).not.toBe(2);
    // An x-request-id the caller did not send is made up and echoed.
    let made: string | null = null;
    await client.getUserState({ appName: "traced", userId: "u" }, { onHeader: (h) => (made = h.get("x-request-id")) });
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.imports().some((u) => u.includes("/sdk-trace-node/"))).toBe(true);
  });

  it.skipIf(!backend.available)(
    "an append's span holds its group-commit batch and the batch's SQL; its log lines carry its ids",
    async () => {
      const { server, url } = sharedServer();
      const client = createClient(SessionService, createGrpcTransport({ baseUrl: url }));
      const userId = unique("u");
      const { session } = await client.createSession({ appName: "traced", userId });
      const caller = callerTrace();
      await client.appendEvent(
        { appName: "traced", userId, sessionId: session?.id ?? "", event: { author: "user", actions: { stateDelta: { k: 1 } } } },
        { headers: caller.headers },
      );
      const rpc = await receiver.waitFor("AppendEvent", spanOf(caller, "sessionstore.v1.SessionService/AppendEvent"));
      expect(rpc.parentSpanId).toBe(caller.parentId);
      const batch = await receiver.waitFor("batch", spanOf(caller, "sessionstore.append_batch"));
      expect(batch.parentSpanId).toBe(rpc.spanId);
      expect(batch.links).toContainEqual({ traceId: caller.traceId, spanId: rpc.spanId });
      expect(batch.attributes["sessionstore.batch.size"]).toBe(1);
      expect(rpc.events.find((e) => e.name === "joined batch")?.attributes["sessionstore.batch.span_id"]).toBe(batch.spanId);
      const sql = await receiver.waitFor("append SQL", (s) => s.traceId === caller.traceId && s.parentSpanId === batch.spanId);
      expect(sql.name).toBe("SELECT sessionstore_append");
      expect(sql.kind).toBe(3); // CLIENT
      expect(sql.attributes["db.query.text"]).toContain("sessionstore_append(");
      // The store's warning about the session's limit was written during the call.
      const warning = await server.waitForLog((l) => l.msg === "session is approaching a limit" && l.trace_id === caller.traceId);
      expect(warning).toMatchObject({ trace_id: caller.traceId, request_id: caller.requestId });
      expect([rpc.spanId, batch.spanId]).toContain(warning?.span_id);
    },
  );

  it.skipIf(!backend.available)(
    "a tail's fan-out is a span linked to the batch that woke it; deliveries are events of the tail's span",
    async () => {
      const { url } = sharedServer();
      const client = createClient(SessionService, createGrpcTransport({ baseUrl: url }));
      const userId = unique("u");
      const { session } = await client.createSession({ appName: "traced", userId });
      const sessionId = session?.id ?? "";
      const tailer = callerTrace();
      const stop = new AbortController();
      const tail = client
        .streamEvents({ appName: "traced", userId, sessionId }, { headers: tailer.headers, signal: stop.signal })
        [Symbol.asyncIterator]();
      expect((await tail.next()).value?.kind.case).toBe("caughtUp");
      const writer = callerTrace();
      await client.appendEvent({ appName: "traced", userId, sessionId, event: { author: "agent" } }, { headers: writer.headers });
      // Heartbeats may come first on a slow machine; they are not deliveries.
      let next = await tail.next();
      while (next.value?.kind.case === "heartbeat") next = await tail.next();
      expect(next.value?.kind.case).toBe("event");
      stop.abort();
      await tail.return?.();

      const batch = await receiver.waitFor("batch", spanOf(writer, "sessionstore.append_batch"));
      const fanOut = await receiver.waitFor(
        "fan-out",
        (s) =>
          s.name === "sessionstore.feed.fan_out" &&
          s.links.some((l) => l.spanId === batch.spanId) &&
          Number(s.attributes["sessionstore.feed.deliveries"]) >= 1,
      );
      expect(fanOut.links).toContainEqual({ traceId: writer.traceId, spanId: batch.spanId });
      expect(fanOut.parentSpanId).toBe("");
      expect(fanOut.attributes["sessionstore.feed.deliveries"]).toBeGreaterThanOrEqual(1);

      const tailSpan = await receiver.waitFor("tail", spanOf(tailer, "sessionstore.v1.SessionService/StreamEvents"));
      expect(tailSpan.parentSpanId).toBe(tailer.parentId);
      expect(tailSpan.events.map((e) => e.name)).toEqual(["caught up", "event delivered"]);
      expect(tailSpan.events[1]?.attributes).toMatchObject({ "sessionstore.session_id": sessionId, "sessionstore.seq": 1 });
      expect(tailSpan.attributes["rpc.grpc.status_code"]).toBe(1); // CANCELLED: the client left
    },
  );

  it.skipIf(backend.name !== "pglite")("spans still buffered at SIGTERM are sent before the process exits", async () => {
    const { server, url } = await tracedServer({ OTEL_BSP_SCHEDULE_DELAY: "600000" });
    const caller = callerTrace();
    await createClient(SessionService, createGrpcTransport({ baseUrl: url })).getUserState(
      { appName: "traced", userId: "u" },
      { headers: caller.headers },
    );
    expect(receiver.spans.some((s) => s.traceId === caller.traceId)).toBe(false);
    process.kill(server.child.pid as number, "SIGTERM");
    expect(await server.exited).toBe(0);
    expect(receiver.spans.some(spanOf(caller, "sessionstore.v1.SessionService/GetUserState"))).toBe(true);
  });

  it.skipIf(!backend.available)("without the OTEL variables, or with OTEL_SDK_DISABLED, no SDK is loaded and nothing is sent", async () => {
    // A receiver of its own: the suite's traced server may still be sending.
    const quiet = await new OtlpReceiver().start();
    cleanups.push(() => quiet.close());
    const envs: Record<string, string>[] = [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: quiet.url, OTEL_SDK_DISABLED: "true" }];
    for (const env of envs) {
      const server = startServer(await storeArgs(backend), { ...env, OTEL_BSP_SCHEDULE_DELAY: "50", SESSIONSTORE_TOKENS: TOKENS });
      const url = await server.url;
      const client = createClient(SessionService, createGrpcTransport({ baseUrl: url, interceptors: [bearer] }));
      const caller = callerTrace();
      const userId = unique("u");
      const { session } = await client.createSession({ appName: "traced", userId }, { headers: caller.headers });
      let echoed: string | null = null;
      await client.appendEvent(
        { appName: "traced", userId, sessionId: session?.id ?? "", event: { author: "user" } },
        { headers: caller.headers, onHeader: (h) => (echoed = h.get("x-request-id")) },
      );
      // Request ids do not depend on tracing, and the call's own log lines name them.
      expect(echoed).toBe(caller.requestId);
      await expect(client.getUserState({ appName: "elsewhere", userId }, { headers: caller.headers })).rejects.toThrow(/permission denied/);
      expect(await server.waitForLog((l) => l.msg === "permission denied")).toMatchObject({
        appName: "elsewhere",
        request_id: caller.requestId,
      });
      process.kill(server.child.pid as number, "SIGTERM");
      expect(await server.exited).toBe(0);
      expect(quiet.requests).toBe(0);
      expect(server.imports().filter((u) => !u.includes("/@opentelemetry/api/"))).toEqual([]);
      expect(server.logs.some((l) => l.trace_id !== undefined)).toBe(false);
    }
  });
});
