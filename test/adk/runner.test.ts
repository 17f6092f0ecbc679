// A real adk-js Runner over GrpcSessionService, with a scripted model. The
// Python cross-language test runs the same turns (adk-js-turns.ts) and reads
// them back from Python and Go.

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect, it } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { GrpcSessionService } from "../../src/adk/index.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { runTwoTurns } from "./adk-js-turns.js";

describeContract("adk-js Runner over GrpcSessionService", (t) => {
  it("runs two turns with a tool, temp: state and user: state, and reads them back", async () => {
    const service = new GrpcSessionService(createClient(SessionService, createGrpcTransport({ baseUrl: t().server.url })));
    const appName = unique("app");
    const turns = await runTwoTurns(service, appName, "u1");
    expect(turns.authors).toEqual([["assistant", "assistant", "assistant"], ["assistant"]]);
    // temp: was there for the model call after the tool, and gone in the next invocation.
    expect(turns.tempSeen).toEqual([null, "saw teal", null]);

    const stored = await service.getSession({ appName, userId: "u1", sessionId: turns.sessionId });
    expect(stored?.state).toEqual({ "user:favorite_color": "teal", last_reply: "Your favorite color is teal." });
    const summary = stored?.events.map((e) => [e.author, e.content?.parts?.[0]]);
    expect(summary).toEqual([
      ["user", { text: "My favorite color is teal." }],
      ["assistant", { functionCall: { id: "fc-1", name: "remember_color", args: { color: "teal" } } }],
      ["assistant", { functionResponse: { id: "fc-1", name: "remember_color", response: { status: "saved" } } }],
      ["assistant", { text: "Saved: teal." }],
      ["user", { text: "What is my favorite color?" }],
      ["assistant", { text: "Your favorite color is teal." }],
    ]);
    expect(stored?.events.flatMap((e) => Object.keys(e.actions.stateDelta)).filter((k) => k.startsWith("temp:"))).toEqual([]);
    // The second turn's model saw the whole first turn, read back from the server.
    const history = turns.model.requests[2]?.contents ?? [];
    expect(history).toHaveLength(5);
    expect(history[4]?.parts?.[0]?.text).toBe("What is my favorite color?");
    const other = await service.createSession({ appName, userId: "u1" });
    expect(other.state).toEqual({ "user:favorite_color": "teal" });
  });
});
