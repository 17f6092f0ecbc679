// MemoryService calls in the clients' retry list: each is retried on
// UNAVAILABLE, and an AddMemories whose answer was lost stores its entries once.

import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createMemoryClient } from "../../src/client/create-client.js";
import type { RetryPolicy } from "../../src/client/retry.js";
import { describeContract, expectCode } from "../support/contract.js";
import { FaultProxy } from "../support/fault-proxy.js";
import { unique } from "../support/ids.js";

function retries(policy: RetryPolicy = {}) {
  const methods: string[] = [];
  const retry: RetryPolicy = {
    maxAttempts: 1_000_000,
    initialBackoffMs: 20,
    maxBackoffMs: 250,
    ...policy,
    onRetry: ({ method }) => {
      methods.push(method);
    },
  };
  return { methods, retry };
}

describeContract("memory client retries", (t) => {
  it("stores entries without ids once when the answer of AddMemories was lost", async () => {
    const proxy = await FaultProxy.start(t().server.port);
    try {
      const { methods, retry } = retries();
      const client = createMemoryClient(proxy.target, { retry });
      const direct = createMemoryClient(t().server.url);
      const key = { appName: unique("app"), userId: "u1" };
      await client.listMemories(key); // connected through the proxy
      proxy.holdAnswers();
      const request = {
        ...key,
        memories: [{ author: "user", content: { role: "user", parts: [{ data: { case: "text" as const, value: "I live in Lyon." } }] } }],
      };
      const added = client.addMemories(request);
      while ((await direct.listMemories(key)).memories.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proxy.cut(); // the answer is lost; the client sees UNAVAILABLE and retries
      const res = await added;
      expect(new Set(methods)).toEqual(new Set(["AddMemories"]));
      expect(request.memories[0]).not.toHaveProperty("id");
      const stored = (await direct.listMemories(key)).memories;
      expect(stored.map((m) => m.id)).toEqual([res.memories[0]?.id]);
      expect(res.memories[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await proxy.close();
    }
  });

  it("keeps ids the caller gave", async () => {
    const client = createMemoryClient(t().server.url);
    const key = { appName: unique("app"), userId: "u1" };
    const res = await client.addMemories({
      ...key,
      memories: [
        { id: "mine", content: { parts: [{ data: { case: "text", value: "x" } }] } },
        { content: { parts: [{ data: { case: "text", value: "y" } }] } },
      ],
    });
    expect(res.memories.map((m) => m.id)[0]).toBe("mine");
    expect(res.memories[1]?.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("memory client retries without a server", () => {
  // Nothing listens on port 1.
  it("retries every MemoryService call up to maxAttempts tries", async () => {
    const { methods, retry } = retries({ maxAttempts: 2, initialBackoffMs: 1, maxBackoffMs: 2 });
    const client = createMemoryClient("127.0.0.1:1", { retry });
    const key = { appName: "a", userId: "u1" };
    await expectCode(client.addSessionToMemory({ ...key, sessionId: "s" }), Code.Unavailable);
    await expectCode(client.addEventsToMemory({ ...key, events: [{ author: "user" }] }), Code.Unavailable);
    await expectCode(client.addMemories({ ...key, memories: [{}] }), Code.Unavailable);
    await expectCode(client.searchMemory({ ...key, query: "q" }), Code.Unavailable);
    await expectCode(client.listMemories(key), Code.Unavailable);
    await expectCode(client.getMemory({ ...key, memoryId: "m" }), Code.Unavailable);
    await expectCode(client.deleteMemory({ ...key, memoryId: "m" }), Code.Unavailable);
    await expectCode(client.deleteSessionMemories({ ...key, sessionId: "s" }), Code.Unavailable);
    expect(methods).toEqual([
      "AddSessionToMemory",
      "AddEventsToMemory",
      "AddMemories",
      "SearchMemory",
      "ListMemories",
      "GetMemory",
      "DeleteMemory",
      "DeleteSessionMemories",
    ]);
  });
});
