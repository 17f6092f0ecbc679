import type { DetectorName } from "../policy/app-policy.js";

// Built-in detectors of personal data and secrets. A detector finds
// candidates with a regular expression and, where the shape alone is too
// weak, confirms them with a checksum (Luhn for cards, mod 97 for IBANs) or
// a digit count, so that order numbers, dates and prices stay untouched.
//
// Every built-in detector matches whole tokens only: a match counts when the
// character before it and the character after it (if any) are not ASCII
// letters, digits, "_" or "-", the characters identifiers are made of. So
// nothing is ever found inside a UUID, a hex digest, a base64url string, an
// `adk-<uuid>` call id, a `cus_…` id or a traceparent, where a run of digits
// can look like a card or a phone number. The check is on what surrounds the
// whole match: separators inside it ("4111-1111-1111-1111", "+1-415-555-0134")
// are part of the shape.

export interface Detector {
  name: string;
  mark: string;
  pattern: RegExp;
  /** Confirms a candidate; absent means every match counts. */
  valid?: (match: string) => boolean;
  /**
   * A cheap test every match of `pattern` passes (no lookarounds, no
   * backtracking): a string that fails it cannot match, and the full
   * pattern is not run on it. Absent means always run the pattern.
   */
  maybe?: RegExp;
}

const digits = (s: string) => s.replace(/\D/g, "");

/** The characters an identifier is made of; a match must not touch one. */
export const IDENTIFIER_CHAR = "[A-Za-z0-9_-]";

/** `source` as a whole-token pattern: neither preceded nor followed by an identifier character. */
export function wholeToken(source: string): RegExp {
  return new RegExp(`(?<!${IDENTIFIER_CHAR})(?:${source})(?!${IDENTIFIER_CHAR})`, "g");
}

/** `word` matching in any letter case, for key names in an otherwise case-sensitive pattern. */
function anyCase(word: string): string {
  return word.replace(/[A-Za-z]/g, (c) => `[${c.toUpperCase()}${c.toLowerCase()}]`);
}

export function luhn(number: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

export function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/\s/g, "").toUpperCase();
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const d of value) remainder = (remainder * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

// Key names whose value is a secret, in any letter case ("API_KEY", "Password").
/** Every IBAN, card, SSN and phone number has a digit. */
const DIGIT = /\d/;

const SECRET_KEYS = anyCase("api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|password|passwd|client[_-]?secret");

export const BUILT_IN: Record<DetectorName, Detector> = {
  email: {
    name: "email",
    mark: "[EMAIL]",
    maybe: /@/,
    // Starts only where a run of local-part characters starts, and the local
    // part is bounded: an unanchored `[...]+@` rescans a long run from every
    // position, quadratic in the input, which a hostile event could exploit.
    pattern: wholeToken(
      String.raw`(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}`,
    ),
  },
  jwt: {
    name: "jwt",
    mark: "[JWT]",
    maybe: /eyJ/,
    pattern: wholeToken(String.raw`eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),
  },
  apiKey: {
    name: "apiKey",
    mark: "[API_KEY]",
    // Every alternative below starts at, or is preceded by, one of these
    // (case-insensitively: a superset of the case-sensitive ones).
    maybe:
      /bearer|sk-|_live_|_test_|AKIA|ASIA|gh[opsur]_|github_pat_|xox|AIza|glpat-|sst_|api[_-]?key|apikey|secret|access[_-]?token|auth[_-]?token|passw|client[_-]?secret/i,
    // Case-sensitive: vendors' prefixes have one spelling, and a
    // case-insensitive `AKIA…` would take any 20-character word starting
    // "asia". Only the scheme and key names match in any case.
    pattern: wholeToken(
      [
        // Bearer credentials in headers or logs (RFC 6750's b64token).
        String.raw`(?<=\b${anyCase("bearer")}\s{1,3})[A-Za-z0-9._~+/=_-]{16,}`,
        // Vendor key shapes.
        "sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
        "(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        "(?:AKIA|ASIA)[0-9A-Z]{16}",
        "gh[opsur]_[A-Za-z0-9]{36,}",
        "github_pat_[A-Za-z0-9_]{22,}",
        "xox[abposr]-[A-Za-z0-9-]{10,}",
        "AIza[0-9A-Za-z_-]{35}",
        "glpat-[A-Za-z0-9_-]{20,}",
        "sst_[A-Za-z0-9_-]{40,}",
        // key = value, where the key names a secret.
        String.raw`(?<=\b(?:${SECRET_KEYS})["']?\s{0,3}[:=]\s{0,3}["']?)[A-Za-z0-9._~+/!@#$%^&*_-]{8,}`,
      ].join("|"),
    ),
  },
  iban: {
    name: "iban",
    mark: "[IBAN]",
    maybe: DIGIT,
    pattern: wholeToken(String.raw`[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?`),
    valid: ibanValid,
  },
  card: {
    name: "card",
    mark: "[CARD]",
    maybe: DIGIT,
    pattern: wholeToken(String.raw`(?<![\d.,])\d(?:[ -]?\d){12,18}(?![\d.,]\d)`),
    // Issuer prefixes 2 to 6 (Mastercard, Amex and Diners, Visa, Mastercard,
    // Discover and UnionPay) keep epoch milliseconds and other long ids out.
    valid: (m) => {
      const d = digits(m);
      return d.length >= 13 && d.length <= 19 && d[0] !== undefined && d[0] >= "2" && d[0] <= "6" && luhn(d);
    },
  },
  ssn: {
    name: "ssn",
    mark: "[SSN]",
    maybe: DIGIT,
    // Dashed or spaced only: nine bare digits are too often something else.
    pattern: wholeToken(String.raw`(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}`),
  },
  phone: {
    name: "phone",
    mark: "[PHONE]",
    maybe: DIGIT,
    // A group in parentheses is closed in the match, so "(+41 44 668 18 00)"
    // keeps its own closing parenthesis.
    pattern: wholeToken(String.raw`(?<!\+)(?:\+\d{1,3}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,4})){2,5}|(?:\(\d{3}\)|\d{3})[ .-]\d{3}[ .-]\d{4})`),
    valid: (m) => {
      const d = digits(m);
      return m.startsWith("+") ? d.length >= 8 && d.length <= 15 : d.length === 10;
    },
  },
};

/** Precedence when matches overlap: the more specific shape wins. */
export const PRECEDENCE: DetectorName[] = ["jwt", "apiKey", "email", "iban", "card", "ssn", "phone"];
