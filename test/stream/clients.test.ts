import type { MessageShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { expect, it } from "vitest";
import { SessionService, StreamEventsRequestSchema, StreamEventsResponseSchema } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { describeContract } from "../support/contract.js";
import { codec } from "../support/grpc-js.js";
import { unique } from "../support/ids.js";
import { TailRecorder } from "../support/tail.js";

describeContract("StreamEvents clients", (t) => {
  it("streams to a plain grpc-js client", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    const client = new grpc.Client(t().server.url.replace("http://", ""), grpc.credentials.createInsecure());
    const req = codec(StreamEventsRequestSchema);
    const res = codec(StreamEventsResponseSchema);
    const call = client.makeServerStreamRequest("/sessionstore.v1.SessionService/StreamEvents", req.serialize, res.deserialize, key);
    const got: MessageShape<typeof StreamEventsResponseSchema>[] = [];
    const ended = new Promise<grpc.ServiceError | undefined>((resolve) => {
      call.on("error", (err: grpc.ServiceError) => resolve(err));
      call.on("end", () => resolve(undefined));
    });
    let onData = () => {};
    call.on("data", (msg: MessageShape<typeof StreamEventsResponseSchema>) => {
      got.push(msg);
      onData();
    });
    const seen = (n: number) =>
      new Promise<void>((resolve) => {
        onData = () => {
          if (got.filter((r) => r.kind.case === "event").length >= n) resolve();
        };
        onData();
      });
    await seen(1);
    await t().client.appendEvent({ ...key, event: { author: "agent" } });
    await seen(2);
    expect(got.map((r) => r.kind.case)).toEqual(["event", "caughtUp", "event"]);
    call.cancel();
    expect((await ended)?.code).toBe(grpc.status.CANCELLED);
    client.close();
  });

  it("streams over Connect and gRPC-Web on HTTP/1.1, as a browser would", async () => {
    const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
    await t().client.createSession(key);
    await t().client.appendEvent({ ...key, event: { author: "user" } });
    for (const transport of [
      createConnectTransport({ baseUrl: t().server.url, httpVersion: "1.1" }),
      createGrpcWebTransport({ baseUrl: t().server.url, httpVersion: "1.1" }),
    ]) {
      const tail = new TailRecorder(createClient(SessionService, transport), key);
      await tail.until((r) => r.caughtUp);
      expect(tail.events.map((e) => e.event?.seq)).toEqual([1n]);
      tail.cancel();
      await tail.done;
    }
  });
});
