// Two turns of a real adk-js Runner over GrpcSessionService, with a scripted
// model instead of an LLM. Used by test/adk/runner.test.ts and, as a writer,
// by the Python cross-language test:
//   tsx test/adk/adk-js-turns.ts --url http://127.0.0.1:50051 APP USER
// prints {"sessionId": ..., "authors": [...], "tempSeen": [...]} on one line.

import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { BaseLlm, type Context, FunctionTool, LlmAgent, type LlmRequest, type LlmResponse, Runner } from "@google/adk";
import { GrpcSessionService } from "../../src/adk/index.js";

/** Answers with canned responses, in order: deterministic and offline. */
export class ScriptedModel extends BaseLlm {
  readonly requests: LlmRequest[] = [];
  constructor(private readonly script: LlmResponse[]) {
    super({ model: "scripted" });
  }
  async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.requests.push(request);
    const next = this.script[this.requests.length - 1];
    if (!next) throw new Error(`the script has no answer for call ${this.requests.length}`);
    yield next;
  }
  async connect(): Promise<never> {
    throw new Error("ScriptedModel does not do live connections");
  }
}

export interface Turns {
  sessionId: string;
  authors: string[][];
  tempSeen: unknown[];
  model: ScriptedModel;
}

export async function runTwoTurns(service: GrpcSessionService, appName: string, userId: string): Promise<Turns> {
  const model = new ScriptedModel([
    { content: { role: "model", parts: [{ functionCall: { id: "fc-1", name: "remember_color", args: { color: "teal" } } }] } },
    { content: { role: "model", parts: [{ text: "Saved: teal." }] } },
    { content: { role: "model", parts: [{ text: "Your favorite color is teal." }] } },
  ]);
  const rememberColor = new FunctionTool({
    name: "remember_color",
    description: "Remembers the user's favorite color.",
    parameters: { type: "OBJECT", properties: { color: { type: "STRING" } }, required: ["color"] } as never,
    execute: (input: unknown, context?: Context) => {
      const { color } = input as { color: string };
      context?.state.set("user:favorite_color", color);
      context?.state.set("temp:scratch", `saw ${color}`);
      return { status: "saved" };
    },
  });
  const tempSeen: unknown[] = [];
  const agent = new LlmAgent({
    name: "assistant",
    model,
    instruction: "Help the user.",
    tools: [rememberColor],
    outputKey: "last_reply",
    beforeModelCallback: ({ context }) => {
      tempSeen.push(context.state.get("temp:scratch") ?? null);
      return undefined;
    },
  });
  const runner = new Runner({ appName, agent, sessionService: service });
  const session = await service.createSession({ appName, userId });
  const turn = async (text: string) => {
    const authors: string[] = [];
    for await (const e of runner.runAsync({ userId, sessionId: session.id, newMessage: { role: "user", parts: [{ text }] } })) {
      authors.push(e.author ?? "");
    }
    return authors;
  };
  const authors = [await turn("My favorite color is teal."), await turn("What is my favorite color?")];
  return { sessionId: session.id, authors, tempSeen, model };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { url: { type: "string" } }, allowPositionals: true });
  const [appName, userId] = positionals;
  if (!values.url || !appName || !userId) throw new Error("usage: adk-js-turns.ts --url URL APP USER");
  const turns = await runTwoTurns(new GrpcSessionService(values.url), appName, userId);
  process.stdout.write(`${JSON.stringify({ sessionId: turns.sessionId, authors: turns.authors, tempSeen: turns.tempSeen })}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`adk-js-turns: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
