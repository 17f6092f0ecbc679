import { type DescField, type DescMessage, type JsonValue, ScalarType } from "@bufbuild/protobuf";
import { type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import type { PolicySet, RedactionPolicy } from "../policy/app-policy.js";
import { BUILT_IN, type Detector, PRECEDENCE } from "./detectors.js";

// Redaction on the write path: what is never stored cannot leak from the
// store. The walk covers every string of an event (text, function call
// arguments and responses, state delta values, metadata, extra fields) and
// of a new session's initial state, at any depth. Left alone, because they
// are names the system routes by rather than content: ids, author, branch,
// roles, function and agent names, MIME types, JSON object keys and map keys.
// Matches are whole tokens (see detectors.ts), so no identifier inside a
// scanned string is ever changed either.

const IDENTIFIERS = new Set([
  "sessionstore.v1.Event.id",
  "sessionstore.v1.Event.invocation_id",
  "sessionstore.v1.Event.author",
  "sessionstore.v1.Event.branch",
  "sessionstore.v1.Event.long_running_tool_ids",
  "sessionstore.v1.Event.finish_reason",
  "sessionstore.v1.Event.model_version",
  "sessionstore.v1.Event.error_code",
  "sessionstore.v1.Content.role",
  "sessionstore.v1.FunctionCall.id",
  "sessionstore.v1.FunctionCall.name",
  "sessionstore.v1.FunctionResponse.id",
  "sessionstore.v1.FunctionResponse.name",
  "sessionstore.v1.Blob.mime_type",
  "sessionstore.v1.FileData.mime_type",
  "sessionstore.v1.ExecutableCode.language",
  "sessionstore.v1.CodeExecutionResult.outcome",
  "sessionstore.v1.EventActions.transfer_to_agent",
  "sessionstore.v1.EventActions.rewind_before_invocation_id",
]);

// Decided once per field descriptor: the walk runs on every append.
const identifierFields = new WeakMap<DescField, boolean>();

function isIdentifier(field: DescField): boolean {
  let known = identifierFields.get(field);
  if (known === undefined) {
    known = IDENTIFIERS.has(`${field.parent.typeName}.${field.name}`);
    identifierFields.set(field, known);
  }
  return known;
}

export type Hits = Record<string, number>;

interface Span {
  start: number;
  end: number;
  mark: string;
  name: string;
}

export class Redactor {
  readonly #detectors: Detector[];
  readonly #counts: Map<string, number> | undefined;

  /** `counts` adds up the spans replaced, by detector name, across every call (for metrics). */
  constructor(policy: RedactionPolicy, counts?: Map<string, number>) {
    this.#counts = counts;
    const builtIn = policy.enabled ? PRECEDENCE.filter((name) => policy.detectors.includes(name)).map((name) => BUILT_IN[name]) : [];
    // Custom patterns come first: an app's own shapes are the most specific it knows.
    const custom = policy.enabled
      ? policy.custom.map((c) => ({
          name: c.name,
          mark: c.replacement ?? `[${c.name.toUpperCase()}]`,
          pattern: new RegExp(c.pattern, "gu"),
        }))
      : [];
    this.#detectors = [...custom, ...builtIn];
  }

  get active(): boolean {
    return this.#detectors.length > 0;
  }

  /** The string with every detected span replaced by its mark. */
  redactString(text: string, hits?: Hits): string {
    if (!this.active || text.length === 0) return text;
    // Accepted spans, kept sorted. Each detector's matches arrive in order, so
    // checking them against earlier detectors' spans is one merge pass: linear,
    // even for an input built to produce many matches.
    let spans: Span[] = [];
    for (const detector of this.#detectors) {
      if (detector.maybe && !detector.maybe.test(text)) continue;
      detector.pattern.lastIndex = 0;
      const merged: Span[] = [];
      let i = 0;
      for (const m of text.matchAll(detector.pattern)) {
        if (m[0].length === 0 || m.index === undefined) continue;
        const start = m.index;
        const end = start + m[0].length;
        while (i < spans.length && (spans[i] as Span).end <= start) merged.push(spans[i++] as Span);
        // Earlier detectors take precedence over overlapping later ones.
        if (i < spans.length && (spans[i] as Span).start < end) continue;
        if (detector.valid && !detector.valid(m[0])) continue;
        merged.push({ start, end, mark: detector.mark, name: detector.name });
      }
      while (i < spans.length) merged.push(spans[i++] as Span);
      spans = merged;
    }
    if (spans.length === 0) return text;
    let out = "";
    let at = 0;
    for (const span of spans) {
      out += text.slice(at, span.start) + span.mark;
      at = span.end;
      if (hits) hits[span.name] = (hits[span.name] ?? 0) + 1;
      if (this.#counts) this.#counts.set(span.name, (this.#counts.get(span.name) ?? 0) + 1);
    }
    return out + text.slice(at);
  }

  /** A copy of a JSON value with every string value redacted (keys kept). */
  redactJson<T extends JsonValue>(value: T, hits?: Hits): T {
    if (!this.active) return value;
    return this.#json(value, hits) as T;
  }

  /** Redacts an event in place and returns it. */
  redactEvent(event: Event, hits?: Hits): Event {
    if (this.active) this.#message(EventSchema, event as unknown as Record<string, unknown>, hits);
    return event;
  }

  #json(value: JsonValue, hits: Hits | undefined): JsonValue {
    if (typeof value === "string") return this.redactString(value, hits);
    if (Array.isArray(value)) return value.map((v) => this.#json(v, hits));
    if (value !== null && typeof value === "object") {
      const out: Record<string, JsonValue> = {};
      for (const [k, v] of Object.entries(value)) {
        // defineProperty: a key "__proto__" must stay a key.
        Object.defineProperty(out, k, { value: this.#json(v as JsonValue, hits), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return value;
  }

  #message(desc: DescMessage, msg: Record<string, unknown>, hits: Hits | undefined): void {
    // Unknown fields are bytes this walk cannot read. The handler refuses
    // them before redaction (rpc/unknown-fields.ts); should one get here
    // anyway, a redacted message keeps none rather than store them unread.
    if (msg.$unknown !== undefined) delete msg.$unknown;
    for (const field of desc.fields) {
      let holder: Record<string, unknown> = msg;
      let key = field.localName;
      if (field.oneof) {
        const oneof = msg[field.oneof.localName] as { case?: string; value?: unknown };
        if (oneof.case !== field.localName) continue;
        holder = oneof as Record<string, unknown>;
        key = "value";
      }
      const value = holder[key];
      if (value === undefined || value === null) continue;
      switch (field.fieldKind) {
        case "scalar":
          if (field.scalar === ScalarType.STRING && !isIdentifier(field)) holder[key] = this.redactString(value as string, hits);
          break;
        case "message":
          if (field.message.typeName === "google.protobuf.Struct" || field.message.typeName === "google.protobuf.Value") {
            holder[key] = this.#json(value as JsonValue, hits);
          } else {
            this.#message(field.message, value as Record<string, unknown>, hits);
          }
          break;
        case "list":
          if (field.listKind === "scalar" && field.scalar === ScalarType.STRING && !isIdentifier(field)) {
            holder[key] = (value as string[]).map((s) => this.redactString(s, hits));
          } else if (field.listKind === "message") {
            for (const item of value as Record<string, unknown>[]) this.#message(field.message, item, hits);
          }
          break;
        case "map":
          if (field.mapKind === "scalar" && field.scalar === ScalarType.STRING) {
            const map = value as Record<string, string>;
            for (const k of Object.keys(map)) map[k] = this.redactString(map[k] as string, hits);
          } else if (field.mapKind === "message") {
            for (const item of Object.values(value as Record<string, Record<string, unknown>>)) this.#message(field.message, item, hits);
          }
          break;
        case "enum":
          break;
      }
    }
  }
}

/** One compiled redactor per app, built on first use from the app's policy. */
export class RedactorSet {
  readonly #policies: PolicySet;
  readonly #byApp = new Map<string, Redactor>();
  /** Spans replaced so far, by detector name, by every app's redactor. */
  readonly counts = new Map<string, number>();

  constructor(policies: PolicySet) {
    this.#policies = policies;
  }

  for(appName: string): Redactor {
    let redactor = this.#byApp.get(appName);
    if (!redactor) {
      redactor = new Redactor(this.#policies.for(appName).redaction, this.counts);
      // App names are bounded in practice; the cap keeps a flood of invented
      // names from growing the cache without limit.
      if (this.#byApp.size > 10_000) this.#byApp.clear();
      this.#byApp.set(appName, redactor);
    }
    return redactor;
  }
}
