import { describe, expect, it } from "vitest";
import { DETECTOR_NAMES } from "../../src/policy/app-policy.js";
import { BUILT_IN } from "../../src/redact/detectors.js";

// A detector's `maybe` lets the redactor skip its full pattern on strings
// that cannot match: it must pass every string the pattern matches in, or a
// secret would be stored. Checked on shapes of every alternative, in mixed
// letter case, and on random text made of the characters the patterns use.

const SHAPES = [
  "ada.lovelace@example.com",
  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw",
  "Authorization: Bearer abcdef0123456789abcdef",
  "authorization: BEARER abcdef0123456789abcdef",
  "sk-proj-abcdefghijklmnopqrstuvwx1234",
  "sk-ant-abcdefghijklmnopqrstuvwx1234",
  "rk_test_abcdefghijklmnop1234",
  "pk_live_abcdefghijklmnop1234",
  "AKIAIOSFODNN7EXAMPLE",
  "ASIAIOSFODNN7EXAMPLE",
  "ghs_abcdefghijklmnopqrstuvwxyz0123456789",
  "github_pat_abcdefghijklmnopqrstuvwxyz0123",
  "xoxp-1234567890-abcdefghij",
  "AIzaSyA1234567890abcdefghijklmnopqrstuv",
  "glpat-abcdefghijklmnopqrstuv",
  "sst_abcdefghijklmnopqrstuvwxyz0123456789abcdefgh",
  "API-KEY: abcd1234efgh5678",
  "ApiKey=abcd1234efgh5678",
  "Secret_Key = 'abcd1234efgh5678'",
  "ACCESS_TOKEN: abcd1234efgh5678",
  "Auth-Token=abcd1234efgh5678",
  "PassWd: hunter2hunter2",
  "CLIENT-SECRET: hunter2hunter2",
  "DE89 3704 0044 0532 0130 00",
  "4111 1111 1111 1111",
  "123-45-6789",
  "+41 44 668 18 00",
  "(415) 555-0134",
];

const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .-_@:=+()'\"/";

/** A deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("redaction prefilter", () => {
  it("passes every string a built-in detector matches in", () => {
    const next = random(13);
    const texts: string[] = [];
    for (const shape of SHAPES) {
      texts.push(shape, `x ${shape} y`, shape.toLowerCase(), shape.toUpperCase());
    }
    for (let i = 0; i < 20_000; i++) {
      let text = "";
      const length = 1 + Math.floor(next() * 60);
      for (let j = 0; j < length; j++) text += ALPHABET[Math.floor(next() * ALPHABET.length)];
      texts.push(text);
    }
    let matched = 0;
    for (const name of DETECTOR_NAMES) {
      const detector = BUILT_IN[name];
      expect(detector.maybe, name).toBeDefined();
      for (const text of texts) {
        detector.pattern.lastIndex = 0;
        if (!detector.pattern.test(text)) continue;
        matched++;
        expect(detector.maybe?.test(text), `${name} on ${JSON.stringify(text)}`).toBe(true);
      }
    }
    // Every shape matched its detector: the check above ran on real matches.
    expect(matched).toBeGreaterThanOrEqual(SHAPES.length);
  });
});
