import { expect, it } from "vitest";
import { createSessionStoreClient } from "../../src/client/create-client.js";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";

describeContract("createSessionStoreClient", (t) => {
  for (const protocol of ["grpc", "connect", "grpc-web"] as const) {
    it(`works over ${protocol}`, async () => {
      const client = createSessionStoreClient(t().server.url, { protocol, timeoutMs: 5000 });
      const appName = unique("app");
      const created = await client.createSession({ appName, userId: "u1", state: { "user:lang": "fr" } });
      const key = { appName, userId: "u1", sessionId: created.session?.id as string };
      await client.appendEvent({ ...key, event: { author: "user", content: { parts: [{ data: { case: "text", value: "hi" } }] } } });
      const got = await client.getSession({ ...key, numRecentEvents: 1 });
      expect(got.session?.events[0]?.content?.parts[0]?.data).toEqual({ case: "text", value: "hi" });
      expect((await client.getUserState(key)).state).toEqual({ lang: "fr" });
    });
  }
});
