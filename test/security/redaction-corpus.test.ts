import type { JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY } from "../../src/policy/app-policy.js";
import { type Hits, Redactor } from "../../src/redact/redactor.js";

// What the built-in detectors must catch, and what they must leave alone.
// Each positive names the mark expected in its place.
const POSITIVES: [string, string][] = [
  ["write to ada.lovelace@example.com today", "[EMAIL]"],
  ["cc: Bob.Smith+agents@mail.example.co.uk", "[EMAIL]"],
  ["UPPER@EXAMPLE.ORG", "[EMAIL]"],
  ["call +41 44 668 18 00", "[PHONE]"],
  ["US office (415) 555-0134", "[PHONE]"],
  ["mobile 415-555-0134", "[PHONE]"],
  ["+44 20 7946 0958 is London", "[PHONE]"],
  ["dots 415.555.0134", "[PHONE]"],
  ["visa 4111 1111 1111 1111", "[CARD]"],
  ["mc 5555-5555-5555-4444", "[CARD]"],
  ["amex 378282246310005", "[CARD]"],
  ["discover 6011111111111117", "[CARD]"],
  ["iban DE89 3704 0044 0532 0130 00", "[IBAN]"],
  ["iban GB82WEST12345698765432", "[IBAN]"],
  ["FR1420041010050500013M02606 is French", "[IBAN]"],
  ["ssn 123-45-6789", "[SSN]"],
  ["ssn 078 05 1120", "[SSN]"],
  [
    "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "[JWT]",
  ],
  ["Authorization: Bearer abcdef0123456789abcdef", "[API_KEY]"],
  ["OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234", "[API_KEY]"],
  ["aws AKIAIOSFODNN7EXAMPLE", "[API_KEY]"],
  ["gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[API_KEY]"],
  ["slack xoxb-1234567890-abcdefghij", "[API_KEY]"],
  ["google AIzaSyA1234567890abcdefghijklmnopqrstuv", "[API_KEY]"],
  ["stripe sk_live_abcdefghijklmnop1234", "[API_KEY]"],
  ["password: hunter2hunter2", "[API_KEY]"],
  ['{"api_key": "abcd1234efgh5678"}', "[API_KEY]"],
];

// Look-alikes that must survive untouched.
const NEGATIVES: string[] = [
  "Order ORD-991 shipped Tuesday.",
  "Your total is $1,234.56 for 3 items.",
  "Meeting on 2024-01-15 at 10:30, room 4-112.",
  "Timestamp 2024-01-15T10:00:00Z and epoch 1732950000123.",
  "Request id 550e8400-e29b-41d4-a716-446655440000.",
  "Version 1.2.3 of the agent, build 20240115.",
  "Tracking number 1Z999AA10123456784.",
  "pi is 3.14159265358979323846",
  "The answer is 42 and the year is 1984.",
  "Invoice INV-2024-000123 is due.",
  "Coordinates 47.3769, 8.5417 are in Zurich.",
  "Use the @mention feature or email support.",
  "price: 1499 cents; quantity: 12",
  "Card ending 4242 was charged.",
  "ISBN 978-3-16-148410-0",
  "A 16-digit id 1234567812345678 that fails Luhn.",
  "A ten-digit 1234567890 order number.",
  "SSN-like but invalid 000-12-3456 and 666-45-6789.",
  "password reset link sent",
  "The token expired; log in again.",
  "ip 192.168.100.1 port 8080",
  "eyJ is how JSON starts in base64",
  "DE00 is not an IBAN",
  "call me maybe",
];

describe("the built-in detectors on a corpus", () => {
  const redactor = new Redactor(DEFAULT_POLICY.redaction);

  it("catch every positive and touch no negative", () => {
    const missed: string[] = [];
    const touched: string[] = [];
    for (const [text, mark] of POSITIVES) {
      if (!redactor.redactString(text).includes(mark)) missed.push(`${text} (want ${mark})`);
    }
    for (const text of NEGATIVES) {
      const out = redactor.redactString(text);
      if (out !== text) touched.push(`${text} -> ${out}`);
    }
    console.log(
      `redaction corpus: caught ${POSITIVES.length - missed.length}/${POSITIVES.length} positives, wrongly touched ${touched.length}/${NEGATIVES.length} negatives`,
    );
    expect(missed).toEqual([]);
    expect(touched).toEqual([]);
  });

  it("find PII at any depth of nested JSON, and leave keys and non-strings alone", () => {
    const nested: JsonValue = {
      customer: { contact: { emails: ["a@example.com", { work: "b@example.org" }] }, card: "4111-1111-1111-1111" },
      "a@example.com": 1,
      notes: [[["deep: +41 44 668 18 00"]]],
      count: 4111111111111111,
      ok: true,
      none: null,
    };
    const hits: Hits = {};
    const out = redactor.redactJson(nested, hits);
    expect(out).toEqual({
      customer: { contact: { emails: ["[EMAIL]", { work: "[EMAIL]" }] }, card: "[CARD]" },
      "a@example.com": 1,
      notes: [[["deep: [PHONE]"]]],
      count: 4111111111111111,
      ok: true,
      none: null,
    });
    expect(hits).toEqual({ email: 2, card: 1, phone: 1 });
    // A copy: the input is unchanged.
    expect((nested as { customer: { card: string } }).customer.card).toBe("4111-1111-1111-1111");
  });

  it("prefers the more specific detector when matches overlap, and replaces each span once", () => {
    expect(redactor.redactString("jwt eyJhbGciOiJub25lIn0.eyJzdWIiOiJhQGIuY29tIn0.")).toBe("jwt [JWT]");
    expect(redactor.redactString("two a@example.com, b@example.com")).toBe("two [EMAIL], [EMAIL]");
  });

  it("apply custom patterns and can be switched off per detector or entirely", () => {
    const custom = new Redactor({ enabled: true, detectors: ["email"], custom: [{ name: "ticket", pattern: "TCK-\\d{6}" }] });
    expect(custom.redactString("TCK-123456 from a@example.com, card 4111 1111 1111 1111")).toBe(
      "[TICKET] from [EMAIL], card 4111 1111 1111 1111",
    );
    const off = new Redactor({ ...DEFAULT_POLICY.redaction, enabled: false });
    expect(off.redactString("a@example.com")).toBe("a@example.com");
  });
});
