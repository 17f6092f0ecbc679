import { create, type DescField, type DescMessage, type JsonValue, ScalarType } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/ts/grpc/health/v1/health_pb.js";
import { CheckpointService } from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract } from "../support/contract.js";
import { snapshot } from "../support/db-snapshot.js";

// Hostile input, generated from the service descriptor itself so that every
// RPC (including ones added later) is fuzzed. Each answer must be a proper
// status, never INTERNAL or UNKNOWN; a refused write must leave the database
// exactly as it was; and the server must keep serving.

const KNOWN = { app: "fuzz-app", user: "u1", session: "s1" };

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(KNOWN.app, KNOWN.user, KNOWN.session, "s2", "user") },
  fc.constantFrom("", " ", " padded ", "\u0000", "a\u0000b", "\ud800", "x\udfffy", "\u202e", "🙂", "é", "\n", "app:x", "temp:y", "user:"),
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.nat({ max: 300_000 }).map((n) => "x".repeat(n)),
);

const leaf: fc.Arbitrary<JsonValue> = fc.oneof(
  hostileString,
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, Number.MAX_VALUE, 2 ** 53 + 1),
  fc.boolean(),
  fc.constant(null),
);

const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

const deep = fc.integer({ min: 1, max: 400 }).map((depth) => {
  let value: JsonValue = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { d: value };
  return { nested: value };
});

const wide = fc.integer({ min: 1000, max: 10_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));

const struct = fc.oneof(fc.dictionary(hostileString, json, { maxKeys: 6 }), deep, wide);

/** An arbitrary init object for any message, following its fields. */
function messageArb(desc: DescMessage, depth: number): fc.Arbitrary<Record<string, unknown>> {
  if (desc.typeName === "google.protobuf.Struct") return struct as fc.Arbitrary<Record<string, unknown>>;
  if (desc.typeName === "google.protobuf.Timestamp" || desc.typeName === "google.protobuf.Duration") {
    return fc.record({
      seconds: fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }),
      nanos: fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }),
    });
  }
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      parts[member.localName] = fc.oneof(
        fc.constant({ case: undefined }),
        ...member.fields.map((f) => fieldArb(f, depth).map((value) => ({ case: f.localName, value }))),
      );
    } else {
      parts[member.localName] = fieldArb(member, depth);
    }
  }
  return fc.record(parts, { requiredKeys: [] });
}

function fieldArb(field: DescField, depth: number): fc.Arbitrary<unknown> {
  const scalar = (type: ScalarType | undefined): fc.Arbitrary<unknown> => {
    switch (type) {
      case ScalarType.STRING:
        return hostileString;
      case ScalarType.BYTES:
        return fc.uint8Array({ maxLength: 64 });
      case ScalarType.BOOL:
        return fc.boolean();
      case ScalarType.INT64:
      case ScalarType.SINT64:
      case ScalarType.SFIXED64:
        return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
      case ScalarType.UINT64:
      case ScalarType.FIXED64:
        return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
      case ScalarType.DOUBLE:
        return fc.double();
      case ScalarType.FLOAT:
        // What a float field can carry on the wire (NaN and infinities included).
        return fc.float();
      default:
        return fc.integer();
    }
  };
  const message = (desc: DescMessage) => (depth > 3 ? fc.constant(undefined) : messageArb(desc, depth + 1));
  switch (field.fieldKind) {
    case "scalar":
      return scalar(field.scalar);
    case "enum":
      // Unknown values included.
      return fc.integer({ min: -3, max: 12 });
    case "message":
      return message(field.message);
    case "list":
      return fc.array(
        field.listKind === "message" ? message(field.message) : field.listKind === "enum" ? fc.integer() : scalar(field.scalar),
        {
          maxLength: 3,
        },
      );
    case "map":
      return fc.dictionary(
        fc.string({ maxLength: 8 }),
        field.mapKind === "message" ? message(field.message) : field.mapKind === "enum" ? fc.integer() : scalar(field.scalar),
        { maxKeys: 3 },
      );
  }
}

const wrongTypes = fc.dictionary(
  fc.constantFrom(
    "appName",
    "userId",
    "sessionId",
    "state",
    "event",
    "numRecentEvents",
    "pageSize",
    "order",
    "afterSeq",
    "cursor",
    "expectedRevision",
  ),
  fc.oneof(fc.anything(), fc.constantFrom([1, 2], "not-an-object", { stateDelta: [1] }, { actions: { stateDelta: "x" } }, "1e400")),
);

describeContract(
  "hostile input",
  (t) => {
    beforeAll(async () => {
      await t().client.createSession({ appName: KNOWN.app, userId: KNOWN.user, sessionId: KNOWN.session, state: { keep: 1 } });
      await t().client.appendEvent({ appName: KNOWN.app, userId: KNOWN.user, sessionId: KNOWN.session, event: { author: "user" } });
    });

    let tried = 0;
    afterAll(() => {
      console.log(`hostile input: ${tried} cases tried`);
    });

    const services = [SessionService, MemoryService, CheckpointService];
    for (const [service, method] of services.flatMap((svc) => svc.methods.map((m) => [svc, m] as const))) {
      it(`${method.name}: random and malformed typed requests get a proper status and write nothing when refused`, async () => {
        // Node's HTTP/2 client kills its own session past 10 MiB of buffered
        // data (ENHANCE_YOUR_CALM), and these requests can be larger.
        const client = createClient(
          service as typeof SessionService,
          createGrpcTransport({ baseUrl: t().server.url, nodeOptions: { maxSessionMemory: 512 } }),
        );
        const fn = (client as unknown as Record<string, (req: unknown, opts?: unknown) => unknown>)[method.localName];
        if (!fn) throw new Error(`no client method for ${method.name}`);
        await fc.assert(
          fc.asyncProperty(messageArb(method.input, 0), async (init) => {
            tried++;
            let request: unknown;
            try {
              request = create(method.input, init as never);
            } catch {
              return; // Not even encodable: no client can send it.
            }
            const before = await snapshot(t().database);
            let failed: ConnectError | undefined;
            try {
              if (method.methodKind === "server_streaming") {
                const controller = new AbortController();
                for await (const _ of fn(request, { signal: controller.signal, timeoutMs: 5000 }) as AsyncIterable<unknown>) {
                  controller.abort();
                  break;
                }
              } else {
                await fn(request, { timeoutMs: 10_000 });
              }
            } catch (err) {
              failed = ConnectError.from(err);
            }
            if (failed && failed.code !== Code.Canceled) {
              expect([Code.Internal, Code.Unknown], `${method.name}: ${failed.rawMessage}`).not.toContain(failed.code);
              expect(await snapshot(t().database), `${method.name} refused with ${Code[failed.code]} but wrote`).toBe(before);
            }
          }),
          { numRuns: 60 },
        );
        // 60 random requests, each with a database snapshot before and after:
        // seconds on a quiet machine, far more on a loaded one.
      }, 180_000);
    }

    it("answers JSON with wrong types and bodies that are not protobuf with a proper status on every RPC", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...SessionService.methods),
          fc.oneof(
            wrongTypes.map((body) => ({ type: "application/json", body: JSON.stringify(body) })),
            fc.string().map((body) => ({ type: "application/json", body })),
            fc.uint8Array({ maxLength: 200 }).map((body) => ({ type: "application/proto", body })),
          ),
          async (method, { type, body }) => {
            tried++;
            const streaming = method.methodKind === "server_streaming";
            const res = await fetch(`${t().server.url}/${SessionService.typeName}/${method.name}`, {
              method: "POST",
              headers: { "content-type": streaming ? type.replace("application/", "application/connect+") : type },
              body:
                streaming && typeof body === "string"
                  ? envelope(new TextEncoder().encode(body))
                  : streaming
                    ? envelope(body as Uint8Array)
                    : body,
              signal: AbortSignal.timeout(10_000),
            }).catch((err: unknown) => err as Error);
            if (res instanceof Error) {
              // A stream that started answering and was cut by our timeout.
              expect(res.name).toMatch(/TimeoutError|AbortError/);
              return;
            }
            // A tail never ends by itself: its first chunk (an error, or the
            // first event or caught_up) is the answer to judge.
            const reader = res.body?.getReader();
            const first = await reader?.read().catch((err: unknown) => ({ done: true, value: undefined, err }));
            await reader?.cancel().catch(() => {});
            const text = Buffer.from(first?.value ?? new Uint8Array()).toString("latin1");
            expect(text).not.toMatch(/"code":"(internal|unknown)"/);
            expect(res.status).not.toBe(500);
          },
        ),
        { numRuns: 150 },
      );
    });

    it("is still serving and still consistent", async () => {
      const health = t().clientFor(Health);
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      // Whatever the fuzzer managed to store still reads back whole: each
      // session's events are 1..revision.
      const sessions = (await t().client.listSessions({ appName: KNOWN.app, pageSize: 1000 })).sessions;
      for (const s of sessions) {
        const got = (await t().client.getSession({ appName: KNOWN.app, userId: s.userId, sessionId: s.id })).session;
        expect(got?.events.map((e) => e.seq)).toEqual(Array.from({ length: Number(got?.revision) }, (_, i) => BigInt(i + 1)));
      }
      const created = await t().client.createSession({ appName: "after-fuzz", userId: "u" });
      expect(created.session?.id).toBeTruthy();
    });
  },
  { maxMessageBytes: 1024 * 1024 },
);

/** Connect streaming requests are enveloped: a flag byte and a length, then the message. */
function envelope(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}
