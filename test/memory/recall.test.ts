import { create } from "@bufbuild/protobuf";
import { expect, it } from "vitest";
import { ContentSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { describeContract } from "../support/contract.js";
import { ACKNOWLEDGEMENT, recallSet } from "./recall-set.js";

const APP = "recall";
const K = 5;

// Recall of text search on a set with known answers: each fact is told in
// a session and ingested with AddSessionToMemory, as an agent would; each
// question is a SearchMemory for its user. The bar: the answer in the top
// 5 for at least 90 of 100 questions, and never an entry of another user.
describeContract("memory recall", (server) => {
  it("finds the answer in the top 5 for at least 90% of the questions, and nothing of another user", async () => {
    const sessions = server().client;
    const memory = server().clientFor(MemoryService);
    const { users, questions } = recallSet();
    let facts = 0;
    for (const user of users) {
      for (const told of user.sessions) {
        const { session } = await sessions.createSession({ appName: APP, userId: user.userId });
        const sessionId = session?.id ?? "";
        for (const fact of told) {
          for (const [author, role, text] of [
            ["user", "user", fact.text],
            ["assistant", "model", ACKNOWLEDGEMENT],
          ] as const) {
            await sessions.appendEvent({
              appName: APP,
              userId: user.userId,
              sessionId,
              event: { author, content: create(ContentSchema, { role, parts: [{ data: { case: "text", value: text } }] }) },
            });
          }
          facts++;
        }
        await memory.addSessionToMemory({ appName: APP, userId: user.userId, sessionId });
      }
    }
    expect(facts).toBeGreaterThanOrEqual(200);
    expect(new Set(questions.map((q) => q.userId)).size).toBe(20);
    expect(questions).toHaveLength(100);

    let hits = 0;
    let reciprocal = 0;
    let crossUser = 0;
    const missed: string[] = [];
    for (const q of questions) {
      const { results } = await memory.searchMemory({ appName: APP, userId: q.userId, query: q.text, pageSize: K });
      crossUser += results.filter((r) => r.memory?.userId !== q.userId).length;
      const rank = results.findIndex((r) =>
        r.memory?.content?.parts.some((p) => p.data.case === "text" && p.data.value.includes(q.answer)),
      );
      if (rank >= 0) {
        hits++;
        reciprocal += 1 / (rank + 1);
      } else {
        missed.push(`${q.userId}: ${q.text} (${q.answer})`);
      }
    }
    const recall = hits / questions.length;
    const mrr = reciprocal / questions.length;
    expect(crossUser).toBe(0);
    expect(recall, `recall@5 ${recall}, MRR ${mrr.toFixed(3)}; missed:\n${missed.join("\n")}`).toBeGreaterThanOrEqual(0.9);
  }, 120_000);
});
