import { expect, it } from "vitest";
import { describeContract } from "../support/contract.js";
import { unique } from "../support/ids.js";
import { TailRecorder } from "../support/tail.js";

const policy = JSON.stringify({
  apps: {
    "raw-app": { redaction: { enabled: false } },
    "ticket-app": { redaction: { custom: [{ name: "ticket", pattern: "TCK-\\d{6}" }] } },
  },
});

describeContract(
  "redaction on the write path",
  (t) => {
    it("redacts every string of a real ADK event shape before it is stored or streamed", async () => {
      const appName = unique("app");
      const key = { appName, userId: "u1", sessionId: "s" };
      const created = await t().client.createSession({ ...key, state: { contact: "ada@example.com", "user:phone": "+41 44 668 18 00" } });
      expect(created.session?.state).toEqual({ contact: "[EMAIL]", "user:phone": "[PHONE]" });
      const tail = new TailRecorder(t().client, key);
      await tail.until((r) => r.caughtUp);

      // The user's message, the model's tool call with the email in its
      // arguments (the bug the seeds warn about), the tool's response, and
      // the model's reply with state written by the tool.
      await t().client.appendEvent({
        ...key,
        event: {
          author: "user",
          content: { role: "user", parts: [{ data: { case: "text", value: "Where is my order? I'm at ada@example.com" } }] },
        },
      });
      await t().client.appendEvent({
        ...key,
        event: {
          author: "order_agent",
          content: {
            role: "model",
            parts: [
              {
                data: {
                  case: "functionCall",
                  value: { id: "call-1", name: "find_order", args: { email: "ada@example.com", filters: [{ phone: "415-555-0134" }] } },
                },
              },
            ],
          },
          customMetadata: { trace: { auth: "Bearer abcdef0123456789abcdef" } },
          extra: { inputTranscription: { text: "my card is 4111 1111 1111 1111" } },
        },
      });
      await t().client.appendEvent({
        ...key,
        event: {
          author: "order_agent",
          content: {
            role: "user",
            parts: [
              {
                data: {
                  case: "functionResponse",
                  value: {
                    id: "call-1",
                    name: "find_order",
                    response: { order: "ORD-991", billing: { iban: "DE89 3704 0044 0532 0130 00" } },
                  },
                },
              },
            ],
          },
        },
      });
      await t().client.appendEvent({
        ...key,
        event: {
          author: "order_agent",
          content: { role: "model", parts: [{ data: { case: "text", value: "Order ORD-991 shipped on Tuesday." } }] },
          errorMessage: "retry after failure for 123-45-6789",
          actions: { stateDelta: { last_email: "ada@example.com", "user:ssn": "123-45-6789", order: "ORD-991" } },
        },
      });

      const session = (await t().client.getSession(key)).session;
      const [user, call, response, reply] = session?.events ?? [];
      expect(user?.content?.parts[0]?.data).toEqual({ case: "text", value: "Where is my order? I'm at [EMAIL]" });
      const fc = call?.content?.parts[0]?.data;
      expect(fc?.case === "functionCall" && fc.value.args).toEqual({ email: "[EMAIL]", filters: [{ phone: "[PHONE]" }] });
      // Names the system routes by are not content.
      expect(fc?.case === "functionCall" && fc.value.name).toBe("find_order");
      expect(call?.author).toBe("order_agent");
      expect(call?.customMetadata).toEqual({ trace: { auth: "Bearer [API_KEY]" } });
      expect(call?.extra).toEqual({ inputTranscription: { text: "my card is [CARD]" } });
      const fr = response?.content?.parts[0]?.data;
      expect(fr?.case === "functionResponse" && fr.value.response).toEqual({ order: "ORD-991", billing: { iban: "[IBAN]" } });
      expect(reply?.content?.parts[0]?.data).toEqual({ case: "text", value: "Order ORD-991 shipped on Tuesday." });
      expect(reply?.errorMessage).toBe("retry after failure for [SSN]");
      expect(reply?.actions?.stateDelta).toEqual({ last_email: "[EMAIL]", "user:ssn": "[SSN]", order: "ORD-991" });
      expect(session?.state).toEqual({
        contact: "[EMAIL]",
        "user:phone": "[PHONE]",
        last_email: "[EMAIL]",
        "user:ssn": "[SSN]",
        order: "ORD-991",
      });

      // What tails saw is what was stored.
      await tail.until((r) => r.events.length === 4);
      expect(tail.events.map((e) => e.event)).toEqual(session?.events);
      const raw = JSON.stringify(tail.responses, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
      for (const secret of ["ada@example.com", "415-555-0134", "4111 1111", "DE89", "123-45-6789", "abcdef0123456789abcdef"]) {
        expect(raw).not.toContain(secret);
      }
      tail.cancel();
    });

    it("leaves identifier fields as they are, even when they look like personal data", async () => {
      const key = { appName: unique("app"), userId: "u1", sessionId: "s" };
      await t().client.createSession(key);
      const look = "ada@example.com";
      await t().client.appendEvent({
        ...key,
        event: {
          id: `evt-${look}`,
          invocationId: `inv-${look}`,
          author: `agent-${look}`,
          content: {
            role: "model",
            parts: [
              { data: { case: "text", value: `mail ${look}` } },
              { data: { case: "functionCall", value: { id: `call-${look}`, name: `lookup_${look}`, args: { to: look } } } },
            ],
          },
        },
      });
      const [event] = (await t().client.getSession(key)).session?.events ?? [];
      expect(event).toMatchObject({ id: `evt-${look}`, invocationId: `inv-${look}`, author: `agent-${look}` });
      expect(event?.content?.parts[0]?.data).toEqual({ case: "text", value: "mail [EMAIL]" });
      const fc = event?.content?.parts[1]?.data;
      expect(fc?.case === "functionCall" && [fc.value.id, fc.value.name, fc.value.args]).toEqual([
        `call-${look}`,
        `lookup_${look}`,
        { to: "[EMAIL]" },
      ]);
    });

    it("follows each app's configuration", async () => {
      const raw = { appName: "raw-app", userId: unique("u"), sessionId: "s" };
      await t().client.createSession(raw);
      await t().client.appendEvent({
        ...raw,
        event: { author: "user", content: { parts: [{ data: { case: "text", value: "a@example.com" } }] } },
      });
      expect((await t().client.getSession(raw)).session?.events[0]?.content?.parts[0]?.data).toEqual({
        case: "text",
        value: "a@example.com",
      });

      const ticket = { appName: "ticket-app", userId: unique("u"), sessionId: "s" };
      await t().client.createSession(ticket);
      await t().client.appendEvent({
        ...ticket,
        event: { author: "user", content: { parts: [{ data: { case: "text", value: "TCK-123456 for a@example.com" } }] } },
      });
      expect((await t().client.getSession(ticket)).session?.events[0]?.content?.parts[0]?.data).toEqual({
        case: "text",
        value: "[TICKET] for [EMAIL]",
      });
    });
  },
  { policy },
);
