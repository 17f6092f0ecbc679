// A real adk-js Runner with GrpcSessionService and GrpcMemoryService and a
// scripted model: adk-js's load_memory and preload_memory tools recall a fact
// told in one session in a later session of the same user, and never in
// another user's.

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type BaseTool, LlmAgent, type LlmResponse, LOAD_MEMORY, PRELOAD_MEMORY, Runner } from "@google/adk";
import { expect, it } from "vitest";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { GrpcMemoryService, GrpcSessionService } from "../../src/adk/index.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { ScriptedModel } from "./adk-js-turns.js";

const text = (t: string): LlmResponse => ({ content: { role: "model", parts: [{ text: t }] } });

describeContract("adk-js Runner with GrpcMemoryService", (t) => {
  const services = () => {
    const transport = createGrpcTransport({ baseUrl: t().server.url });
    return {
      sessionService: new GrpcSessionService(createClient(SessionService, transport)),
      memoryService: new GrpcMemoryService(createClient(MemoryService, transport)),
    };
  };

  /** Runs one turn in a new session; answers the session's events and what the model was asked. */
  async function turn(appName: string, userId: string, message: string, script: LlmResponse[], tools: BaseTool[]) {
    const { sessionService, memoryService } = services();
    const model = new ScriptedModel(script);
    const agent = new LlmAgent({ name: "assistant", model, instruction: "Help the user.", tools });
    const runner = new Runner({ appName, agent, sessionService, memoryService });
    const session = await sessionService.createSession({ appName, userId });
    for await (const _ of runner.runAsync({ userId, sessionId: session.id, newMessage: { role: "user", parts: [{ text: message }] } })) {
      // drained: the events are read back from the store below
    }
    const stored = await sessionService.getSession({ appName, userId, sessionId: session.id });
    if (!stored) throw new Error("the session is gone");
    await memoryService.addSessionToMemory(stored);
    return { events: stored.events, model };
  }

  async function tellFacts(appName: string) {
    await turn(appName, "alice", "My dog is named Biscuit.", [text("Noted.")], []);
    await turn(appName, "bob", "My cat is named Tofu.", [text("Noted.")], []);
  }

  it("load_memory recalls the fact for the same user only", async () => {
    const appName = unique("app");
    await tellFacts(appName);
    const ask = (userId: string) =>
      turn(
        appName,
        userId,
        "What is my dog named?",
        [
          { content: { role: "model", parts: [{ functionCall: { id: "fc-1", name: "load_memory", args: { query: "dog named" } } }] } },
          text("Done."),
        ],
        [LOAD_MEMORY],
      );
    const recalled = (events: Awaited<ReturnType<typeof ask>>["events"]) => {
      const response = events.flatMap((e) => e.content?.parts ?? []).find((p) => p.functionResponse)?.functionResponse?.response;
      return (response as { memories: { content: string; author?: string }[] }).memories;
    };

    const alice = await ask("alice");
    expect(recalled(alice.events)).toContainEqual(expect.objectContaining({ content: "My dog is named Biscuit.", author: "user" }));
    // The model's second call saw the tool's answer.
    expect(JSON.stringify(alice.model.requests[1]?.contents)).toContain("Biscuit");

    const bob = await ask("bob");
    const bobs = recalled(bob.events).map((m) => m.content);
    expect(bobs).toContain("My cat is named Tofu.");
    expect(JSON.stringify(bob.model.requests)).not.toContain("Biscuit");
  });

  it("preload_memory puts the fact in the instruction for the same user only", async () => {
    const appName = unique("app");
    await tellFacts(appName);
    const ask = (userId: string) => turn(appName, userId, "What is my dog named?", [text("Done.")], [PRELOAD_MEMORY]);
    const instruction = (model: ScriptedModel) => JSON.stringify(model.requests[0]?.config?.systemInstruction ?? "");

    const alice = await ask("alice");
    expect(instruction(alice.model)).toContain("<PAST_CONVERSATIONS>");
    expect(instruction(alice.model)).toContain("user: My dog is named Biscuit.");

    const bob = await ask("bob");
    expect(instruction(bob.model)).toContain("user: My cat is named Tofu.");
    expect(JSON.stringify(bob.model.requests)).not.toContain("Biscuit");

    const carol = await ask("carol");
    expect(instruction(carol.model)).not.toContain("<PAST_CONVERSATIONS>");
  });
});
