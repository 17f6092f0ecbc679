// The TypeScript side of the cross-language test: the same two commands as
// the Go and Python CLIs, with messages as canonical protobuf JSON.
//   tsx clients/ts/cli.ts --url URL get-session APP USER SESSION
//   tsx clients/ts/cli.ts --url URL append-event APP USER SESSION < event.json
//   tsx clients/ts/cli.ts --url URL search-memory APP USER QUERY
import { fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { SearchMemoryResponseSchema } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { AppendEventResponseSchema, GetSessionResponseSchema } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { createMemoryClient, createSessionStoreClient } from "../../src/client/create-client.js";

async function main(argv: string[]): Promise<void> {
  const urlAt = argv.indexOf("--url");
  const url = urlAt >= 0 ? argv[urlAt + 1] : undefined;
  const rest = urlAt >= 0 ? [...argv.slice(0, urlAt), ...argv.slice(urlAt + 2)] : argv;
  const [command, appName, userId, sessionId] = rest;
  if (!url || !command || !appName || !userId || !sessionId) {
    throw new Error("usage: cli.ts --url URL (get-session | append-event) APP USER SESSION");
  }
  const client = createSessionStoreClient(url, { timeoutMs: 10_000 });
  if (command === "get-session") {
    const res = await client.getSession({ appName, userId, sessionId });
    process.stdout.write(`${toJsonString(GetSessionResponseSchema, res)}\n`);
  } else if (command === "append-event") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const event = fromJsonString(EventSchema, Buffer.concat(chunks).toString("utf8"));
    const res = await client.appendEvent({ appName, userId, sessionId, event });
    process.stdout.write(`${toJsonString(AppendEventResponseSchema, res)}\n`);
  } else if (command === "search-memory") {
    // The fourth argument is the query.
    const res = await createMemoryClient(url, { timeoutMs: 10_000 }).searchMemory({ appName, userId, query: sessionId, pageSize: 10 });
    process.stdout.write(`${toJsonString(SearchMemoryResponseSchema, res)}\n`);
  } else {
    throw new Error(`unknown command ${command}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
