// Preloaded into the server by bench/single-append.ts --trace
// (node --import tsx --import ./bench/append-trace.ts src/main.ts): stamps
// each unary gRPC call at the points where an append changes hands (the
// HTTP/2 request arrives, its body is in, the service hands the append to
// the store, group commit takes it, node-postgres sends the statement,
// PostgreSQL's answer arrives, node-postgres returns it, the store answers,
// the response is ended and flushed) and writes the median gap between each
// pair to SESSIONSTORE_BENCH_TRACE at exit. Meant for one writer: with one
// call in flight at a time every stamp belongs to the call in progress.
// Nothing here changes what the server does.

import { writeFileSync } from "node:fs";
import http2 from "node:http2";
import pg from "pg";
import { GroupCommit } from "../src/storage/group-commit.js";
import { SessionStore } from "../src/storage/session-store.js";

const out = process.env.SESSIONSTORE_BENCH_TRACE;

type Stamps = Record<string, number>;

if (out) {
  const calls: Stamps[] = [];
  let current: Stamps | undefined;
  const stamp = (name: string) => {
    if (current && current[name] === undefined) current[name] = performance.now();
  };

  const createServer = http2.createServer as (...args: unknown[]) => http2.Http2Server;
  (http2 as { createServer: unknown }).createServer = (...args: unknown[]) => {
    const handler = args[args.length - 1] as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
    const traced = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
      const call: Stamps = { arrive: performance.now() };
      current = call;
      req.once("end", () => {
        call.body ??= performance.now();
      });
      const end = res.end.bind(res) as (...a: unknown[]) => unknown;
      (res as { end: unknown }).end = (...a: unknown[]) => {
        call.end = performance.now();
        return end(...a);
      };
      res.stream.once("close", () => {
        call.closed = performance.now();
        if (req.url.endsWith("/AppendEvent") && calls.length < 200_000) calls.push(call);
      });
      handler(req, res);
    };
    return createServer(...args.slice(0, -1), traced);
  };

  const appendEvent = SessionStore.prototype.appendEvent;
  SessionStore.prototype.appendEvent = function (this: SessionStore, ...args: Parameters<typeof appendEvent>) {
    stamp("store");
    const settled = appendEvent.apply(this, args);
    void settled.then(
      () => stamp("stored"),
      () => stamp("stored"),
    );
    return settled;
  };

  const submit = GroupCommit.prototype.submit;
  GroupCommit.prototype.submit = function (this: GroupCommit<unknown, unknown>, item: unknown) {
    stamp("submit");
    return submit.call(this, item);
  };

  const watched = new WeakSet<object>();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const stream = (this as unknown as { connection?: { stream?: NodeJS.EventEmitter } }).connection?.stream;
    if (stream && !watched.has(stream)) {
      watched.add(stream);
      stream.on("data", () => stamp("pgdata"));
    }
    stamp("query");
    if (current) current.queries = (current.queries ?? 0) + 1;
    const result = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) {
      void result.then(
        () => stamp("result"),
        () => stamp("result"),
      );
    }
    return result;
  } as typeof query;

  process.on("exit", () => {
    // Gaps between consecutive stamps of a call, in the order they happen.
    const order = ["arrive", "body", "store", "submit", "query", "pgdata", "result", "stored", "end", "closed"];
    const gaps: Record<string, number[]> = {};
    const add = (name: string, ms: number) => {
      const list = gaps[name] ?? [];
      list.push(ms);
      gaps[name] = list;
    };
    const cycle: number[] = [];
    let queries = 0;
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as Stamps;
      const next = calls[i + 1];
      queries += call.queries ?? 0;
      if (next) cycle.push((next.arrive as number) - (call.arrive as number));
      let prev: string | undefined;
      for (const name of order) {
        if (call[name] === undefined) continue;
        if (prev !== undefined) add(`${prev} -> ${name}`, (call[name] as number) - (call[prev] as number));
        prev = name;
      }
      add("arrive -> closed (server)", (call.closed as number) - (call.arrive as number));
    }
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
    };
    const summary = {
      calls: calls.length,
      queriesPerCall: Math.round((queries / Math.max(1, calls.length)) * 100) / 100,
      medianMs: Object.fromEntries(Object.entries(gaps).map(([k, v]) => [k, Math.round(median(v) * 1000) / 1000])),
      counts: Object.fromEntries(Object.entries(gaps).map(([k, v]) => [k, v.length])),
      cycleMedianMs: Math.round(median(cycle) * 1000) / 1000,
    };
    writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  });
}
