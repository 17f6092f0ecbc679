import { type DescMessage, equals, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../../gen/ts/grpc/health/v1/health_pb.js";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import {
  AppendEventRequestSchema,
  AppendEventResponseSchema,
  CreateSessionRequestSchema,
  CreateSessionResponseSchema,
  GetSessionRequestSchema,
  GetSessionResponseSchema,
  GetUserStateRequestSchema,
  GetUserStateResponseSchema,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract } from "../support/contract.js";
import { codec } from "../support/grpc-js.js";
import { unique } from "../support/ids.js";

// The plainest gRPC client there is: @grpc/grpc-js with hand-written paths and
// no generated stubs or proto-loader, the way a client in any other language
// sees the service. If this works, the wire format is standard gRPC, not
// something only Connect clients understand.

const SERVICE = "/sessionstore.v1.SessionService";

function unary<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  path: string,
  input: I,
  output: O,
  request: MessageInitShape<I>,
  options: { metadata?: grpc.Metadata; deadline?: grpc.Deadline } = {},
): Promise<MessageShape<O>> {
  const req = codec(input);
  const res = codec(output);
  const callOptions: grpc.CallOptions = options.deadline === undefined ? {} : { deadline: options.deadline };
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      req.serialize,
      res.deserialize,
      request,
      options.metadata ?? new grpc.Metadata(),
      callOptions,
      (err, value) => {
        if (err) reject(err);
        else if (value === undefined) reject(new Error("no response message"));
        else resolve(value);
      },
    );
  });
}

async function expectStatus(call: Promise<unknown>, code: grpc.status, details?: RegExp): Promise<grpc.ServiceError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected ${grpc.status[code]}, but the call succeeded`).toBeInstanceOf(Error);
  const se = err as grpc.ServiceError;
  expect(grpc.status[se.code], se.details).toBe(grpc.status[code]);
  if (details) expect(se.details).toMatch(details);
  return se;
}

describeContract("a plain @grpc/grpc-js client", (t) => {
  let client: grpc.Client;
  beforeAll(() => {
    client = new grpc.Client(`${t().server.host}:${t().server.port}`, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client.close();
  });

  const createSession = (req: MessageInitShape<typeof CreateSessionRequestSchema>, options?: { deadline?: grpc.Deadline }) =>
    unary(client, `${SERVICE}/CreateSession`, CreateSessionRequestSchema, CreateSessionResponseSchema, req, options);
  const getSession = (req: MessageInitShape<typeof GetSessionRequestSchema>) =>
    unary(client, `${SERVICE}/GetSession`, GetSessionRequestSchema, GetSessionResponseSchema, req);

  it("creates a session, appends an event with bytes and a function call, and reads it back unchanged", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: unique("s") };
    const created = await createSession({ ...key, state: { "user:lang": "de", step: 1 } });
    expect(created.session?.id).toBe(key.sessionId);
    expect(created.session?.state).toEqual({ "user:lang": "de", step: 1 });

    // Every byte value, so a text or base64 detour anywhere would show.
    const png = Uint8Array.from({ length: 256 }, (_, i) => i);
    const appended = await unary(client, `${SERVICE}/AppendEvent`, AppendEventRequestSchema, AppendEventResponseSchema, {
      ...key,
      event: {
        id: "e1",
        invocationId: "inv-1",
        author: "planner",
        content: {
          role: "model",
          parts: [
            { data: { case: "text", value: "Let me look at that image." } },
            { data: { case: "inlineData", value: { mimeType: "image/png", data: png, displayName: "chart.png" } } },
            {
              data: {
                case: "functionCall",
                value: {
                  id: "call-1",
                  name: "lookup",
                  args: { city: "Zürich", days: 3, metric: true, tags: ["a", null], nested: { x: 1.5 } },
                },
              },
              thoughtSignature: new Uint8Array([0, 255, 10, 13]),
            },
          ],
        },
        actions: { stateDelta: { step: 2 } },
      },
    });
    expect(appended.stored).toBe(true);
    expect(appended.event?.seq).toBe(1n);
    expect(appended.revision).toBe(1n);

    const got = await getSession(key);
    expect(got.session?.revision).toBe(1n);
    expect(got.session?.state).toEqual({ "user:lang": "de", step: 2 });
    const events = got.session?.events ?? [];
    expect(events).toHaveLength(1);
    const [stored] = events;
    if (!stored || !appended.event) throw new Error("no event");
    expect(equals(EventSchema, stored, appended.event)).toBe(true);
    const parts = stored.content?.parts ?? [];
    const blob = parts[1]?.data;
    expect(blob?.case).toBe("inlineData");
    if (blob?.case === "inlineData") {
      expect(blob.value.mimeType).toBe("image/png");
      expect(blob.value.data).toEqual(png);
      expect(blob.value.displayName).toBe("chart.png");
    }
    const call = parts[2]?.data;
    expect(call?.case).toBe("functionCall");
    if (call?.case === "functionCall") {
      expect(call.value.id).toBe("call-1");
      expect(call.value.name).toBe("lookup");
      expect(call.value.args).toEqual({ city: "Zürich", days: 3, metric: true, tags: ["a", null], nested: { x: 1.5 } });
    }
    expect(parts[2]?.thoughtSignature).toEqual(new Uint8Array([0, 255, 10, 13]));
  });

  it("surfaces NOT_FOUND as status 5 with the server's message", async () => {
    const appName = unique("app");
    const err = await expectStatus(getSession({ appName, userId: "u1", sessionId: "nowhere" }), grpc.status.NOT_FOUND, /nowhere/);
    expect(err.details).toContain(appName);
  });

  it("surfaces INVALID_ARGUMENT as status 3 naming the field", async () => {
    await expectStatus(createSession({ appName: "", userId: "u1" }), grpc.status.INVALID_ARGUMENT, /app_name/);
    await expectStatus(
      unary(client, `${SERVICE}/GetUserState`, GetUserStateRequestSchema, GetUserStateResponseSchema, { appName: "a", userId: "" }),
      grpc.status.INVALID_ARGUMENT,
      /user_id/,
    );
  });

  it("answers an unknown method with UNIMPLEMENTED", async () => {
    await expectStatus(
      unary(client, `${SERVICE}/NoSuchMethod`, GetUserStateRequestSchema, GetUserStateResponseSchema, { appName: "a", userId: "u" }),
      grpc.status.UNIMPLEMENTED,
    );
  });

  it("streams SERVING from grpc.health.v1.Health/Watch", async () => {
    const req = codec(HealthCheckRequestSchema);
    const res = codec(HealthCheckResponseSchema);
    const call = client.makeServerStreamRequest(
      "/grpc.health.v1.Health/Watch",
      req.serialize,
      res.deserialize,
      { service: "sessionstore.v1.SessionService" },
      new grpc.Metadata(),
    );
    const first = await new Promise<MessageShape<typeof HealthCheckResponseSchema>>((resolve, reject) => {
      call.once("data", resolve);
      call.once("error", reject);
    });
    expect(first.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    // A watch never ends by itself; cancelling it is the client's way out.
    const ended = new Promise<grpc.ServiceError>((resolve) => call.once("error", resolve));
    call.cancel();
    expect((await ended).code).toBe(grpc.status.CANCELLED);
  });

  it("accepts custom metadata and a future deadline", async () => {
    const metadata = new grpc.Metadata();
    metadata.set("x-request-id", "abc-123");
    metadata.set("x-trace-bin", Buffer.from([1, 2, 3]));
    const appName = unique("app");
    const created = await unary(
      client,
      `${SERVICE}/CreateSession`,
      CreateSessionRequestSchema,
      CreateSessionResponseSchema,
      { appName, userId: "u1" },
      { metadata, deadline: Date.now() + 30_000 },
    );
    expect(created.session?.appName).toBe(appName);
  });

  it("fails a call whose deadline has already passed with DEADLINE_EXCEEDED and stores nothing", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "late" };
    await expectStatus(createSession(key, { deadline: Date.now() - 1000 }), grpc.status.DEADLINE_EXCEEDED);
    // The client refuses it before sending, so nothing was created.
    await expectStatus(getSession(key), grpc.status.NOT_FOUND);
    // The channel is still usable afterwards.
    expect((await createSession(key)).session?.id).toBe("late");
  });
});
