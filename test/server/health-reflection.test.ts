import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { create, createFileRegistry, type DescFile, fromBinary } from "@bufbuild/protobuf";
import { type FileDescriptorProto, FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { beforeAll, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/ts/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../gen/ts/grpc/reflection/v1/reflection_pb.js";
import { CheckpointService } from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { ConsoleService } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { file_sessionstore_v1_session_service, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { startTestServer } from "../support/server.js";

const run = promisify(execFile);

describeContract("grpc.health.v1", (t, backend) => {
  let health: Client<typeof Health>;
  beforeAll(() => {
    health = t().clientFor(Health);
  });

  it("reports SERVING for the server and for SessionService, NOT_FOUND for an unknown service", async () => {
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    expect((await health.check({ service: "sessionstore.v1.SessionService" })).status).toBe(Status.SERVING);
    await expectCode(health.check({ service: "no.such.Service" }), Code.NotFound, /no\.such\.Service/);
  });

  it("lists every status", async () => {
    const { statuses } = await health.list({});
    expect(Object.keys(statuses).sort()).toEqual([
      "",
      "sessionstore.v1.CheckpointService",
      "sessionstore.v1.MemoryService",
      "sessionstore.v1.SessionService",
    ]);
    for (const res of Object.values(statuses)) expect(res.status).toBe(Status.SERVING);
  });

  it("answers Watch for an unknown service with SERVICE_UNKNOWN instead of failing", async () => {
    // The health protocol keeps such a watch open: the service may appear later.
    const abort = new AbortController();
    for await (const res of health.watch({ service: "no.such.Service" }, { signal: abort.signal })) {
      expect(res.status).toBe(Status.SERVICE_UNKNOWN);
      break;
    }
    abort.abort();
  });

  it("tells watchers NOT_SERVING once close() begins, over HTTP/2 and HTTP/1.1, then ends their streams", async () => {
    // A server of its own: this one gets closed.
    const own = await startTestServer(backend);
    const watchers = [
      createClient(Health, createGrpcTransport({ baseUrl: own.server.url })),
      createClient(Health, createConnectTransport({ baseUrl: own.server.url, httpVersion: "1.1" })),
    ].map((client) => {
      const seen: Status[] = [];
      let onFirst: () => void = () => {};
      const first = new Promise<void>((resolve) => {
        onFirst = resolve;
      });
      const done = (async () => {
        for await (const res of client.watch({ service: "sessionstore.v1.SessionService" })) {
          seen.push(res.status);
          onFirst();
        }
      })();
      return { seen, first, done };
    });
    await Promise.all(watchers.map((w) => w.first));

    const closing = own.close();
    for (const w of watchers) {
      // The stream ends cleanly after NOT_SERVING: nothing is cut.
      await w.done;
      expect(w.seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    }
    await closing;
    // Nothing listens any more.
    const fresh = createClient(Health, createGrpcTransport({ baseUrl: own.server.url }));
    await expectCode(fresh.check({ service: "" }), Code.Unavailable);
  });
});

/** Sends `requests` on one reflection stream and returns the answers, one per request. */
async function reflect(
  client: Client<typeof ServerReflection>,
  requests: ServerReflectionRequest["messageRequest"][],
): Promise<ServerReflectionResponse[]> {
  async function* input() {
    for (const messageRequest of requests) yield { host: "", messageRequest };
  }
  const out: ServerReflectionResponse[] = [];
  for await (const res of client.serverReflectionInfo(input())) out.push(res);
  return out;
}

function withImports(file: DescFile): string[] {
  const seen = new Set<string>();
  const visit = (f: DescFile) => {
    if (seen.has(f.proto.name)) return;
    seen.add(f.proto.name);
    for (const dep of f.dependencies) visit(dep);
  };
  visit(file);
  return [...seen];
}

function descriptors(res: ServerReflectionResponse | undefined): FileDescriptorProto[] {
  if (res?.messageResponse.case !== "fileDescriptorResponse") {
    throw new Error(`expected descriptors, got ${res?.messageResponse.case}: ${JSON.stringify(res?.messageResponse.value)}`);
  }
  return res.messageResponse.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
}

describeContract("grpc.reflection.v1", (t) => {
  let reflection: Client<typeof ServerReflection>;
  beforeAll(() => {
    // Reflection is a bidi stream, so HTTP/2 only.
    reflection = createClient(ServerReflection, createGrpcTransport({ baseUrl: t().server.url }));
  });

  it("lists the services", async () => {
    const [res] = await reflect(reflection, [{ case: "listServices", value: "" }]);
    expect(res?.messageResponse.case).toBe("listServicesResponse");
    const names = res?.messageResponse.case === "listServicesResponse" ? res.messageResponse.value.service.map((s) => s.name) : [];
    expect(names.sort()).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "sessionstore.v1.CheckpointService",
      "sessionstore.v1.ConsoleService",
      "sessionstore.v1.MemoryService",
      "sessionstore.v1.SessionService",
    ]);
  });

  it("describes SessionService with its dependencies, enough to rebuild the whole schema", async () => {
    const [res] = await reflect(reflection, [{ case: "fileContainingSymbol", value: "sessionstore.v1.SessionService" }]);
    const files = descriptors(res);
    const names = files.map((f) => f.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "google/protobuf/struct.proto",
        "google/protobuf/timestamp.proto",
        "sessionstore/v1/event.proto",
        "sessionstore/v1/session.proto",
        "sessionstore/v1/session_service.proto",
      ]),
    );
    // Exactly the file and everything it imports, directly or not.
    expect([...names].sort()).toEqual(withImports(file_sessionstore_v1_session_service).sort());
    // Each file comes once, after the files it imports.
    for (const [i, f] of files.entries()) {
      for (const dep of f.dependency) expect(names.indexOf(dep), `${f.name} needs ${dep} first`).toBeLessThan(i);
    }

    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: files }));
    const service = registry.getService("sessionstore.v1.SessionService");
    expect(service).toBeDefined();
    const described = service?.methods.map((m) => [m.name, m.methodKind, m.input.typeName, m.output.typeName]);
    const compiled = SessionService.methods.map((m) => [m.name, m.methodKind, m.input.typeName, m.output.typeName]);
    expect(described).toEqual(compiled);
    // Messages resolve down to the well-known types.
    const event = registry.getMessage("sessionstore.v1.Event");
    expect(event?.field.timestamp?.message?.typeName).toBe("google.protobuf.Timestamp");
    expect(event?.field.extra?.message?.typeName).toBe("google.protobuf.Struct");
  });

  it("finds files by name and by message, method, nested and enum symbols on one stream", async () => {
    const answers = await reflect(reflection, [
      { case: "fileByFilename", value: "sessionstore/v1/session.proto" },
      { case: "fileContainingSymbol", value: "sessionstore.v1.Event" },
      { case: "fileContainingSymbol", value: "sessionstore.v1.SessionService.GetSession" },
      { case: "fileContainingSymbol", value: "sessionstore.v1.ListEventsRequest.Order" },
      { case: "fileContainingSymbol", value: "google.protobuf.Struct" },
    ]);
    expect(answers).toHaveLength(5);
    const lastName = (res: ServerReflectionResponse | undefined) => descriptors(res).at(-1)?.name;
    expect(lastName(answers[0])).toBe("sessionstore/v1/session.proto");
    expect(descriptors(answers[0]).map((f) => f.name)).toContain("sessionstore/v1/event.proto");
    expect(lastName(answers[1])).toBe("sessionstore/v1/event.proto");
    expect(lastName(answers[2])).toBe("sessionstore/v1/session_service.proto");
    expect(lastName(answers[3])).toBe("sessionstore/v1/session_service.proto");
    expect(lastName(answers[4])).toBe("google/protobuf/struct.proto");
    // Each answer echoes its request, so a client can match them up.
    expect(answers.map((a) => a.originalRequest?.messageRequest.value)).toEqual([
      "sessionstore/v1/session.proto",
      "sessionstore.v1.Event",
      "sessionstore.v1.SessionService.GetSession",
      "sessionstore.v1.ListEventsRequest.Order",
      "google.protobuf.Struct",
    ]);
  });

  it("answers unknown symbols, files and methods with an error_response of code 5 and keeps the stream open", async () => {
    const answers = await reflect(reflection, [
      { case: "fileContainingSymbol", value: "sessionstore.v1.Nope" },
      { case: "fileContainingSymbol", value: "sessionstore.v1.SessionService.Nope" },
      { case: "fileByFilename", value: "nope.proto" },
      { case: "listServices", value: "" },
    ]);
    for (const res of answers.slice(0, 3)) {
      expect(res.messageResponse.case).toBe("errorResponse");
      if (res.messageResponse.case === "errorResponse") {
        expect(res.messageResponse.value.errorCode).toBe(Code.NotFound);
        expect(res.messageResponse.value.errorMessage).toMatch(/not found/);
      }
    }
    expect(answers[3]?.messageResponse.case).toBe("listServicesResponse");
  });

  const buf = resolve("node_modules/.bin/buf");
  it.skipIf(!existsSync(buf))("lets buf curl list the methods and call GetUserState from reflection alone", async () => {
    // An empty working directory: no buf.yaml or .proto file buf could fall back on.
    const cwd = mkdtempSync(join(tmpdir(), "sessionstore-bufcurl-"));
    try {
      const base = t().server.url;
      const flags = ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect"];
      const listed = await run(buf, [...flags, "--list-methods", base], { cwd });
      const methods = listed.stdout.trim().split("\n").sort();
      expect(methods).toEqual(
        SessionService.methods
          .map((m) => `sessionstore.v1.SessionService/${m.name}`)
          .concat(ConsoleService.methods.map((m) => `sessionstore.v1.ConsoleService/${m.name}`))
          .concat(MemoryService.methods.map((m) => `sessionstore.v1.MemoryService/${m.name}`))
          .concat(CheckpointService.methods.map((m) => `sessionstore.v1.CheckpointService/${m.name}`))
          .concat([
            "grpc.health.v1.Health/Check",
            "grpc.health.v1.Health/List",
            "grpc.health.v1.Health/Watch",
            "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
          ])
          .sort(),
      );

      const appName = unique("app");
      await t().client.createSession({ appName, userId: "u1", state: { "user:via": "buf" } });
      const called = await run(
        buf,
        [...flags, "--data", JSON.stringify({ appName, userId: "u1" }), `${base}/sessionstore.v1.SessionService/GetUserState`],
        { cwd },
      );
      expect(JSON.parse(called.stdout)).toEqual({ state: { via: "buf" } });

      const failed = await run(
        buf,
        [
          ...flags,
          "--data",
          JSON.stringify({ appName, userId: "u1", sessionId: "nope" }),
          `${base}/sessionstore.v1.SessionService/GetSession`,
        ],
        { cwd },
      ).then(
        () => undefined,
        (err: { code?: number; stderr?: string }) => err,
      );
      expect(failed?.code).not.toBe(0);
      expect(failed?.stderr).toMatch(/not_found|NotFound/i);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
