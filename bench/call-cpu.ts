// The gRPC fast path's fixed CPU cost per call, without the database:
//
//   npx tsx bench/call-cpu.ts --root DIR [--root DIR ...] [--calls 20000] [--concurrency 64] [--rounds 5]
//
// Each round starts one server per --root (taking turns within the round),
// sends `--calls` grpc.health.v1 Check calls over one HTTP/2 connection with
// `--concurrency` in flight, and reports the server's CPU per call from /proc
// (after a warm-up of a fifth as many calls). Medians over the rounds at the
// end. DATABASE_URL (default: the local PostgreSQL) is only migrated.
import http2 from "node:http2";
import { resolve } from "node:path";
import { sampleProcess, startServer } from "./server.js";
import { median } from "./stats.js";

const argv = process.argv.slice(2);
const value = (name: string, fallback: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? (argv[i + 1] as string) : fallback;
};
const roots = argv.flatMap((a, i) => (a === "--root" ? [resolve(argv[i + 1] as string)] : []));
if (roots.length === 0) roots.push(process.cwd());
const calls = Number(value("--calls", "20000"));
const concurrency = Number(value("--concurrency", "64"));
const rounds = Number(value("--rounds", "5"));
const databaseUrl = process.env.DATABASE_URL ?? "postgres://sessionstore:sessionstore@127.0.0.1:5432/perfcpu_calls";
// An empty HealthCheckRequest in its gRPC envelope.
const BODY = Buffer.from([0, 0, 0, 0, 0]);

function call(session: http2.ClientHttp2Session): Promise<void> {
  return new Promise((done, fail) => {
    const stream = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": "10S",
    });
    stream.on("trailers", (trailers) => {
      if (trailers["grpc-status"] !== "0") fail(new Error(`grpc-status ${String(trailers["grpc-status"])}`));
    });
    stream.on("data", () => {});
    stream.on("end", () => done());
    stream.on("error", fail);
    stream.end(BODY);
  });
}

async function run(session: http2.ClientHttp2Session, n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      await call(session);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const perRoot = new Map<string, number[]>(roots.map((r) => [r, []]));
for (let round = 1; round <= rounds; round++) {
  for (const root of roots) {
    const server = await startServer({ root, databaseUrl });
    const session = http2.connect(server.url);
    try {
      await run(session, Math.ceil(calls / 5));
      const before = sampleProcess(server.pid).cpuSeconds;
      await run(session, calls);
      const us = ((sampleProcess(server.pid).cpuSeconds - before) / calls) * 1e6;
      (perRoot.get(root) as number[]).push(us);
      console.log(`round ${round} ${root}: server CPU ${us.toFixed(1)} µs/call`);
    } finally {
      session.close();
      await server.stop();
    }
  }
}
for (const [root, values] of perRoot) console.log(`median ${root}: ${median(values).toFixed(1)} µs/call over ${values.length} rounds`);
