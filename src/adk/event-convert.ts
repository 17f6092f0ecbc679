// adk-js's JSON form of an event <-> sessionstore.v1 messages.
//
// An adk-js event is first turned into JSON the way adk-js's own
// DatabaseSessionService stores it (a JSON column, so `JSON.stringify`), so
// whatever survives adk-js's own storage survives ours. Every key with a typed
// slot in the proto goes there; every other key goes, unchanged and in
// adk-js's camelCase, into the `extra` Struct of the innermost message (as
// the Go adapter does with adk-go's JSON). A value only takes a typed slot
// when the slot gives it back exactly (proto3 cannot tell "" from unset in a
// plain string, or [] from unset in a repeated field).
//
// Times: adk-js counts milliseconds (`Date.now()`); the proto keeps
// nanoseconds, so a millisecond value, fractions included, maps to a
// Timestamp and back exactly.

import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  type Content,
  ContentSchema,
  type Event,
  type EventActions,
  EventActionsSchema,
  EventSchema,
  type Part,
  PartSchema,
} from "../../gen/ts/sessionstore/v1/event_pb.js";

type Json = Record<string, JsonValue>;

const TEMP_PREFIX = "temp:";

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON form adk-js's DatabaseSessionService would store for `value`. */
export function jsonForm(value: unknown): Json {
  const parsed: unknown = JSON.parse(JSON.stringify(value) ?? "null");
  if (!isObject(parsed)) throw new TypeError("an event must be a JSON object");
  return parsed;
}

// --- time ---------------------------------------------------------------------

export function timestampFromMillis(ms: number): Timestamp {
  if (!Number.isFinite(ms)) throw new RangeError(`timestamp ${ms} is not a finite number of milliseconds`);
  // From the shortest decimal that reads back as `ms` (what JSON would
  // store), so 1614834367123.456 is .123456000 s, not the binary float's
  // .1234560546875; millisFromTimestamp parses the same decimal back.
  const whole = Math.floor(ms);
  const text = Math.abs(ms).toString();
  const fraction = text.includes("e") || !text.includes(".") ? ms - whole : Number(`0.${text.split(".")[1]}`);
  const frac = ms < 0 && fraction !== 0 && !text.includes("e") ? 1 - fraction : fraction;
  let nanos = Math.round(frac * 1e6);
  let millis = whole;
  if (nanos >= 1e6) {
    millis += 1;
    nanos -= 1e6;
  }
  const seconds = Math.floor(millis / 1000);
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos: (millis - seconds * 1000) * 1e6 + nanos });
}

export function millisFromTimestamp(ts: Timestamp): number {
  const millis = Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6);
  const sub = ts.nanos % 1e6;
  if (sub === 0) return millis;
  // Before 1970 the decimal trick does not apply (nothing adk-js writes).
  return millis < 0 ? millis + sub / 1e6 : Number(`${millis}.${String(sub).padStart(6, "0")}`);
}

function timestampFromSeconds(s: number): Timestamp {
  return timestampFromMillis(s * 1000);
}

function secondsFromTimestamp(ts: Timestamp): number {
  return (Number(ts.seconds) * 1e9 + ts.nanos) / 1e9;
}

// --- base64 -------------------------------------------------------------------

// @google/genai carries bytes as standard base64 strings; Python writes the
// URL-safe alphabet. Both decode; bytes are written back in the standard one.
function bytesFromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) && !/^[A-Za-z0-9\-_]*={0,2}$/.test(text)) return undefined;
  return new Uint8Array(Buffer.from(text, "base64"));
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/** Bytes only take a typed slot when they come back as the very same text. */
function exactBytes(text: unknown): Uint8Array | undefined {
  if (typeof text !== "string") return undefined;
  const bytes = bytesFromBase64(text);
  return bytes && base64(bytes) === text ? bytes : undefined;
}

// --- helpers: take a key out of the JSON into a slot ---------------------------

function take<T>(d: Json, key: string, fits: (v: JsonValue) => T | undefined): T | undefined {
  const value = d[key];
  if (value === undefined) return undefined;
  const out = fits(value);
  if (out !== undefined) delete d[key];
  return out;
}

const asBool = (v: JsonValue) => (typeof v === "boolean" ? v : undefined);
const asString = (v: JsonValue) => (typeof v === "string" ? v : undefined);
const asNonEmptyString = (v: JsonValue) => (typeof v === "string" && v !== "" ? v : undefined);
const asObject = (v: JsonValue) => (isObject(v) ? (v as JsonObject) : undefined);
const asNonEmptyObject = (v: JsonValue) => (isObject(v) && Object.keys(v).length > 0 ? (v as JsonObject) : undefined);

function extraOf(d: Json): JsonObject | undefined {
  return Object.keys(d).length > 0 ? d : undefined;
}

function withExtra(d: Json, extra: JsonObject | undefined): Json {
  return extra ? Object.assign(d, extra) : d;
}

function putDefined(d: Json, key: string, value: JsonValue | undefined): void {
  if (value !== undefined) d[key] = value;
}

// --- Content and Part ---------------------------------------------------------

export function contentToProto(data: Json): Content {
  const d = { ...data };
  const role = take(d, "role", asString);
  const rawParts = d.parts;
  let parts: Part[] = [];
  if (Array.isArray(rawParts) && rawParts.length > 0 && rawParts.every(isObject)) {
    parts = rawParts.map((p) => partToProto(p as Json));
    delete d.parts;
  }
  return create(ContentSchema, { role, parts, extra: extraOf(d) });
}

export function contentFromProto(msg: Content): Json {
  const d: Json = {};
  putDefined(d, "role", msg.role);
  if (msg.parts.length > 0) d.parts = msg.parts.map(partFromProto);
  return withExtra(d, msg.extra);
}

type Flat = "plain" | "optional" | "bytes";
const FLAT_PARTS: Record<string, Record<string, Flat>> = {
  inlineData: { mimeType: "plain", data: "bytes", displayName: "optional" },
  fileData: { mimeType: "plain", fileUri: "plain", displayName: "optional" },
  executableCode: { language: "plain", code: "plain" },
  codeExecutionResult: { outcome: "plain", output: "optional" },
};

/** A message without `extra` is taken whole or not at all. */
function flatToProto(spec: Record<string, Flat>, value: JsonValue | undefined): Record<string, string | Uint8Array> | undefined {
  if (!isObject(value) || !Object.keys(value).every((k) => k in spec)) return undefined;
  const out: Record<string, string | Uint8Array> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string" || (spec[key] !== "optional" && v === "")) return undefined;
    if (spec[key] === "bytes") {
      const bytes = exactBytes(v);
      if (!bytes) return undefined;
      out[key] = bytes;
    } else {
      out[key] = v;
    }
  }
  return out;
}

function flatFromProto(spec: Record<string, Flat>, msg: Record<string, unknown>): Json {
  const d: Json = {};
  for (const [key, kind] of Object.entries(spec)) {
    const v = msg[key];
    if (kind === "optional") putDefined(d, key, v as string | undefined);
    else if (kind === "bytes" && v instanceof Uint8Array && v.length > 0) d[key] = base64(v);
    else if (typeof v === "string" && v !== "") d[key] = v;
  }
  return d;
}

function callToProto(payload: "args" | "response", data: Json) {
  const d = { ...data };
  const id = take(d, "id", asString);
  const name = take(d, "name", asNonEmptyString) ?? "";
  const body = take(d, payload, asObject);
  return { id, name, [payload]: body, extra: extraOf(d) };
}

function callFromProto(
  payload: "args" | "response",
  msg: { id?: string; name: string; extra?: JsonObject } & Record<string, unknown>,
): Json {
  const d: Json = {};
  putDefined(d, "id", msg.id);
  if (msg.name !== "") d.name = msg.name;
  putDefined(d, payload, msg[payload] as JsonObject | undefined);
  return withExtra(d, msg.extra);
}

function partToProto(data: Json): Part {
  const d = { ...data };
  const part = create(PartSchema);
  if (typeof d.text === "string") {
    part.data = { case: "text", value: d.text };
    delete d.text;
  } else if (isObject(d.functionCall)) {
    part.data = { case: "functionCall", value: { $typeName: "sessionstore.v1.FunctionCall", ...callToProto("args", d.functionCall) } };
    delete d.functionCall;
  } else if (isObject(d.functionResponse)) {
    part.data = {
      case: "functionResponse",
      value: { $typeName: "sessionstore.v1.FunctionResponse", ...callToProto("response", d.functionResponse) },
    };
    delete d.functionResponse;
  } else {
    for (const [key, spec] of Object.entries(FLAT_PARTS)) {
      const flat = flatToProto(spec, d[key]);
      if (flat) {
        const init = create(PartSchema, { data: { case: key, value: flat } as never });
        part.data = init.data;
        delete d[key];
        break;
      }
    }
  }
  part.thought = take(d, "thought", asBool);
  part.thoughtSignature = take(d, "thoughtSignature", (v) => exactBytes(v));
  part.extra = extraOf(d);
  return part;
}

function partFromProto(msg: Part): Json {
  const d: Json = {};
  switch (msg.data.case) {
    case "text":
      d.text = msg.data.value;
      break;
    case "functionCall":
      d.functionCall = callFromProto("args", msg.data.value as never);
      break;
    case "functionResponse":
      d.functionResponse = callFromProto("response", msg.data.value as never);
      break;
    case undefined:
      break;
    default: {
      const spec = FLAT_PARTS[msg.data.case];
      if (spec) d[msg.data.case] = flatFromProto(spec, msg.data.value as unknown as Record<string, unknown>);
    }
  }
  putDefined(d, "thought", msg.thought);
  if (msg.thoughtSignature !== undefined) d.thoughtSignature = base64(msg.thoughtSignature);
  return withExtra(d, msg.extra);
}

// --- EventActions -------------------------------------------------------------

// adk-js's createEventActions always sets these to {}: empty is unset.
const ACTION_DICTS = ["stateDelta", "requestedAuthConfigs", "requestedToolConfirmations"] as const;
const ACTION_FLAGS = ["escalate", "skipSummarization", "endOfAgent"] as const;
const ACTION_TEXTS = ["transferToAgent", "rewindBeforeInvocationId"] as const;

function actionsToProto(data: Json, dropTemp: boolean): EventActions {
  const d = { ...data };
  const msg = create(EventActionsSchema);
  if (dropTemp && isObject(d.stateDelta)) {
    d.stateDelta = Object.fromEntries(Object.entries(d.stateDelta).filter(([k]) => !k.startsWith(TEMP_PREFIX)));
  }
  for (const key of ACTION_DICTS) {
    if (isObject(d[key]) && Object.keys(d[key]).length === 0) delete d[key];
    msg[key] = take(d, key, asNonEmptyObject);
  }
  msg.agentState = take(d, "agentState", asObject);
  const artifacts = d.artifactDelta;
  if (isObject(artifacts) && Object.values(artifacts).every((v) => typeof v === "number" && Number.isSafeInteger(v))) {
    msg.artifactDelta = Object.fromEntries(Object.entries(artifacts).map(([k, v]) => [k, BigInt(v as number)]));
    delete d.artifactDelta;
  }
  for (const key of ACTION_FLAGS) msg[key] = take(d, key, asBool);
  for (const key of ACTION_TEXTS) msg[key] = take(d, key, asString);
  // Python ADK's compaction (seconds), in the camelCase adk-js would give it.
  const c = d.compaction;
  if (
    isObject(c) &&
    Object.keys(c).sort().join() === "compactedContent,endTimestamp,startTimestamp" &&
    typeof c.startTimestamp === "number" &&
    typeof c.endTimestamp === "number" &&
    isObject(c.compactedContent)
  ) {
    msg.compaction = {
      $typeName: "sessionstore.v1.EventCompaction",
      startTimestamp: timestampFromSeconds(c.startTimestamp),
      endTimestamp: timestampFromSeconds(c.endTimestamp),
      compactedContent: contentToProto(c.compactedContent),
    };
    delete d.compaction;
  }
  msg.extra = extraOf(d);
  return msg;
}

function actionsFromProto(msg: EventActions | undefined): Json {
  // What adk-js's createEventActions() gives every event.
  const d: Json = { stateDelta: {}, artifactDelta: {}, requestedAuthConfigs: {}, requestedToolConfirmations: {} };
  if (!msg) return d;
  for (const key of ACTION_DICTS) if (msg[key]) d[key] = msg[key];
  putDefined(d, "agentState", msg.agentState);
  d.artifactDelta = Object.fromEntries(Object.entries(msg.artifactDelta).map(([k, v]) => [k, Number(v)]));
  for (const key of ACTION_FLAGS) putDefined(d, key, msg[key]);
  for (const key of ACTION_TEXTS) putDefined(d, key, msg[key]);
  if (msg.compaction) {
    const c = msg.compaction;
    d.compaction = {
      startTimestamp: c.startTimestamp ? secondsFromTimestamp(c.startTimestamp) : 0,
      endTimestamp: c.endTimestamp ? secondsFromTimestamp(c.endTimestamp) : 0,
      compactedContent: c.compactedContent ? contentFromProto(c.compactedContent) : {},
    };
  }
  return withExtra(d, msg.extra);
}

// --- Event --------------------------------------------------------------------

const EVENT_FLAGS = ["partial", "turnComplete", "interrupted"] as const;
const EVENT_TEXTS = ["branch", "errorCode", "errorMessage", "finishReason", "modelVersion"] as const;
const EVENT_METADATA = ["customMetadata", "usageMetadata", "groundingMetadata", "citationMetadata"] as const;

/**
 * An adk-js event (any object) as the proto Event. `dropTemp` removes
 * `temp:` keys from the state delta, as adk-js does before storing.
 */
export function eventToProto(event: unknown, options: { dropTemp?: boolean } = {}): Event {
  const d = jsonForm(event);
  const msg = create(EventSchema);
  msg.id = take(d, "id", asString) ?? "";
  msg.invocationId = take(d, "invocationId", asString) ?? "";
  // `author` is optional in adk-js: only a non-empty one fits the plain string.
  msg.author = take(d, "author", asNonEmptyString) ?? "";
  msg.timestamp = take(d, "timestamp", (v) => (typeof v === "number" ? timestampFromMillis(v) : undefined));
  for (const key of EVENT_FLAGS) msg[key] = take(d, key, asBool);
  for (const key of EVENT_TEXTS) msg[key] = take(d, key, asString);
  for (const key of EVENT_METADATA) msg[key] = take(d, key, asObject);
  const ids = d.longRunningToolIds;
  if (Array.isArray(ids) && ids.length > 0 && ids.every((i) => typeof i === "string")) {
    msg.longRunningToolIds = ids as string[];
    delete d.longRunningToolIds;
  }
  msg.content = take(d, "content", (v) => (isObject(v) ? contentToProto(v) : undefined));
  msg.actions = take(d, "actions", (v) => (isObject(v) ? actionsToProto(v, options.dropTemp ?? false) : undefined));
  msg.extra = extraOf(d);
  return msg;
}

/** A stored proto Event as adk-js's JSON form of an event. */
export function eventFromProto(msg: Event): Json {
  const d: Json = { id: msg.id, invocationId: msg.invocationId };
  if (msg.author !== "") d.author = msg.author;
  if (msg.timestamp) d.timestamp = millisFromTimestamp(msg.timestamp);
  for (const key of EVENT_FLAGS) putDefined(d, key, msg[key]);
  for (const key of EVENT_TEXTS) putDefined(d, key, msg[key]);
  for (const key of EVENT_METADATA) putDefined(d, key, msg[key]);
  if (msg.longRunningToolIds.length > 0) d.longRunningToolIds = [...msg.longRunningToolIds];
  if (msg.content) d.content = contentFromProto(msg.content);
  d.actions = actionsFromProto(msg.actions);
  return withExtra(d, msg.extra);
}
