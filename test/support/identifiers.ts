// Identifiers of the shapes agents and their tools carry around, from a
// seeded generator so that a failure reproduces: the false-positive tests of
// redaction put them everywhere an event holds content and require that
// none comes back changed.
//
// Besides ids drawn as their formats draw them, "digit-rich" variants draw
// hex and base62 characters mostly from digits: real ids produce a run of
// digits that looks like a card or a phone number about once in a thousand,
// these do so in most ids, which is what a test of "never inside an
// identifier" needs.

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = "0123456789abcdef";
const DIGITS = "0123456789";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE64URL = `${BASE62}-_`;
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const STRIPE_PREFIXES = ["cus", "sk", "pi", "ch", "sub", "in", "txn", "evt", "req", "acct", "prod", "price", "seti", "re", "po"];
const PATH_SEGMENTS = ["users", "orders", "sessions", "items", "files", "runs", "traces", "invoices"];

export interface Identifier {
  shape: string;
  id: string;
}

export class IdentifierGenerator {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = prng(seed);
  }

  #int(n: number): number {
    return Math.floor(this.#next() * n);
  }

  #pick<T>(items: readonly T[]): T {
    return items[this.#int(items.length)] as T;
  }

  /** `length` characters of `alphabet`; with `digitBias`, each is a digit with that probability. */
  #chars(alphabet: string, length: number, digitBias = 0): string {
    let out = "";
    for (let i = 0; i < length; i++) {
      out += this.#next() < digitBias ? DIGITS[this.#int(10)] : alphabet[this.#int(alphabet.length)];
    }
    return out;
  }

  #bytes(length: number): Buffer {
    const bytes = Buffer.alloc(length);
    for (let i = 0; i < length; i++) bytes[i] = this.#int(256);
    return bytes;
  }

  uuid4(digitBias = 0): string {
    const h = (n: number) => this.#chars(HEX, n, digitBias);
    return `${h(8)}-${h(4)}-4${h(3)}-${"89ab"[this.#int(4)]}${h(3)}-${h(12)}`;
  }

  uuid7(): string {
    const ms = (1_700_000_000_000 + this.#int(200_000_000_000)).toString(16).padStart(12, "0");
    return `${ms.slice(0, 8)}-${ms.slice(8)}-7${this.#chars(HEX, 3)}-${"89ab"[this.#int(4)]}${this.#chars(HEX, 3)}-${this.#chars(HEX, 12)}`;
  }

  ulid(digitBias = 0): string {
    // The first character of a ULID is 0 to 7 (48 bits of milliseconds).
    return `${this.#int(8)}${this.#chars(CROCKFORD, 25, digitBias)}`;
  }

  hex(length: number, digitBias = 0): string {
    return this.#chars(HEX, length, digitBias);
  }

  base64(bytes: number): string {
    return this.#bytes(bytes).toString("base64");
  }

  base64url(bytes: number): string {
    return this.#bytes(bytes).toString("base64url");
  }

  /** The whole of one identifier of a shape picked at random. */
  next(): Identifier {
    const rich = 0.9;
    const r = this.#int(22);
    switch (r) {
      case 0:
        return { shape: "uuid4", id: this.uuid4() };
      case 1:
        return { shape: "uuid4-upper", id: this.uuid4().toUpperCase() };
      case 2:
        return { shape: "uuid4-digit-rich", id: this.uuid4(rich) };
      case 3:
        return { shape: "uuid7", id: this.uuid7() };
      case 4:
        return { shape: "ulid", id: this.ulid() };
      case 5:
        return { shape: "ulid-digit-rich", id: this.ulid(rich) };
      case 6:
        return { shape: "hex-digest", id: this.hex(this.#pick([32, 40, 64])) };
      case 7:
        return { shape: "hex-digest-digit-rich", id: this.hex(this.#pick([32, 40, 64]), rich) };
      case 8:
        return { shape: "base64", id: this.base64(12 + this.#int(37)) };
      case 9:
        return { shape: "base64url", id: this.base64url(12 + this.#int(37)) };
      case 10:
        return { shape: "nanoid", id: this.#chars(BASE64URL, 21) };
      case 11:
        return { shape: "adk-call-id", id: `adk-${this.uuid4()}` };
      case 12:
      case 13:
        return { shape: "adk-call-id-digit-rich", id: `adk-${this.uuid4(rich)}` };
      case 14:
        return { shape: "prefixed", id: `${this.#pick(STRIPE_PREFIXES)}_${this.#chars(BASE62, 14 + this.#int(11))}` };
      case 15:
        return { shape: "prefixed-digit-rich", id: `${this.#pick(STRIPE_PREFIXES)}_${this.#chars(BASE62, 14 + this.#int(11), rich)}` };
      case 16:
        return { shape: "ksuid", id: this.#chars(BASE62, 27) };
      case 17:
        return { shape: "traceparent", id: `00-${this.hex(32)}-${this.hex(16)}-0${this.#int(2)}` };
      case 18:
      case 19:
        return { shape: "traceparent-digit-rich", id: `00-${this.hex(32, rich)}-${this.hex(16, rich)}-0${this.#int(2)}` };
      default:
        return { shape: "url-path-id", id: this.#url() };
    }
  }

  #pathId(): string {
    switch (this.#int(7)) {
      case 0:
        return this.uuid4(this.#next() < 0.5 ? 0.9 : 0);
      case 1:
        return this.ulid(0.9);
      case 2:
        return this.hex(40, 0.9);
      case 3:
        return String(1 + this.#int(999_999_999));
      case 4:
        // A snowflake: milliseconds since an epoch, shifted; 18 or 19 digits starting with 1.
        return `1${this.#chars(DIGITS, 17 + this.#int(2))}`;
      case 5:
        return `${this.#pick(STRIPE_PREFIXES)}_${this.#chars(BASE62, 16, 0.9)}`;
      default:
        return `adk-${this.uuid4(0.9)}`;
    }
  }

  #url(): string {
    const host = this.#pick(["api.example.com", "storage.example.org", "localhost:8080"]);
    let path = `/v${1 + this.#int(3)}/${this.#pick(PATH_SEGMENTS)}/${this.#pathId()}`;
    if (this.#next() < 0.5) path += `/${this.#pick(PATH_SEGMENTS)}/${this.#pathId()}`;
    if (this.#next() < 0.3) path += `?page=${this.#int(50)}&ref=${this.#pathId()}`;
    return `https://${host}${path}`;
  }
}

/** Sentences around one identifier, in the ways text quotes ids. */
export const TEXT_TEMPLATES: readonly ((id: string) => string)[] = [
  (id) => id,
  (id) => `The tool returned ${id}.`,
  (id) => `(${id})`,
  (id) => `"${id}"`,
  (id) => `see ${id}, then retry`,
  (id) => `id: ${id}\n`,
  (id) => `ref=${id};`,
  (id) => `<${id}>`,
  (id) => `[${id}]`,
  (id) => `'${id}'`,
  (id) => `\`${id}\``,
  (id) => `${id}\t${id}`,
];
