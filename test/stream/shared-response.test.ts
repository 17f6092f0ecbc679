import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { StreamEventsResponseSchema } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { knownEncoding } from "../../src/rpc/encoded.js";
import { eventResponse } from "../../src/rpc/stream-events.js";
import type { LoggedEvent } from "../../src/storage/event-log.js";

// Fan-out: a thousand tails of one session each send an event. The response
// (with its encoding) must be built once per event and scope, not per tail.

function logged(text: string): LoggedEvent {
  const event = create(EventSchema, { id: "e1", author: "user", seq: 7n, content: { parts: [{ data: { case: "text", value: text } }] } });
  return {
    sessionPk: 1n,
    appName: "app",
    userId: "u",
    sessionId: "s",
    seq: 7n,
    position: { tx: 100n, pos: 3n },
    body: toBinary(EventSchema, event),
  };
}

describe("a streamed event's response", () => {
  it("is one object per event and scope, its cursor made once, with an encoding that decodes to it", () => {
    const row = logged("hello");
    let cursors = 0;
    const cursor = (value: string) => () => {
      cursors++;
      return value;
    };
    const first = eventResponse(row, "scope-a", cursor("cursor-a"));
    const again = eventResponse(row, "scope-a", cursor("cursor-a"));
    expect(again).toBe(first);
    expect(cursors).toBe(1);
    const bytes = knownEncoding(first);
    expect(bytes).toBeDefined();
    expect(fromBinary(StreamEventsResponseSchema, bytes as Uint8Array)).toEqual(first);
    expect(first.kind.case === "event" && first.kind.value).toMatchObject({
      appName: "app",
      userId: "u",
      sessionId: "s",
      cursor: "cursor-a",
    });

    // Another scope (an app-wide tail of the same row): its own cursor, the same decoded event.
    const wide = eventResponse(row, "scope-b", cursor("cursor-b"));
    expect(wide).not.toBe(first);
    expect(wide.kind.case === "event" && wide.kind.value.cursor).toBe("cursor-b");
    const eventOf = (r: typeof first) => (r.kind.case === "event" ? r.kind.value.event : undefined);
    expect(eventOf(wide)).toBe(eventOf(first));

    // Another row with the same content (a catch-up read of its own): its own response.
    expect(eventResponse(logged("hello"), "scope-a", cursor("cursor-a"))).not.toBe(first);
  });
});
