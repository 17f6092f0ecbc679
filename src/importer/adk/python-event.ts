// Python ADK's JSON form of an event (`Event.model_dump(mode="json",
// exclude_none=True)`, snake_case) as the sessionstore.v1 Event, slot for slot
// the way the Python client's adapter (clients/python/src/sessionstore_client/
// _convert.py, `event_to_pb`) maps it: what `GrpcSessionService` reads back is
// then the event ADK's own DatabaseSessionService returns. A value only takes a
// typed slot when the slot gives it back exactly; the rest goes, unchanged,
// into the nearest `extra`.

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
} from "../../../gen/ts/sessionstore/v1/event_pb.js";

type Json = Record<string, JsonValue>;

const MAX_EXACT_INT = 2 ** 53;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Refuses what a Struct (doubles) cannot hold, as the Python client does. */
function checkStruct(value: JsonValue, path: string): void {
  if (typeof value === "number") {
    if (Number.isInteger(value) && Math.abs(value) > MAX_EXACT_INT) {
      throw new RangeError(`${path}: integer ${value} is outside +-2**53, which a protobuf Struct cannot hold exactly`);
    }
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) checkStruct(v, `${path}[${i}]`);
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) checkStruct(v, `${path}.${k}`);
  }
}

function struct(value: Json, path: string): JsonObject {
  checkStruct(value, path);
  return value;
}

/** Python's round(): half to even. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Float seconds -> Timestamp, exactly as `_convert.to_timestamp`. */
export function timestampFromSeconds(seconds: number): Timestamp {
  let whole = Math.floor(seconds);
  let nanos = roundHalfEven((seconds - whole) * 1e9);
  if (nanos === 1_000_000_000) {
    whole += 1;
    nanos = 0;
  }
  return create(TimestampSchema, { seconds: BigInt(whole), nanos });
}

function b64decode(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "base64url"));
}

function takeOptional(d: Json, key: string, kind: "string" | "boolean"): never | undefined | string | boolean {
  const v = d[key];
  if (typeof v !== kind) return undefined;
  delete d[key];
  return v as string | boolean;
}

function takePlainString(d: Json, key: string): string {
  const v = d[key];
  if (typeof v !== "string" || v === "") return "";
  delete d[key];
  return v;
}

function takeStruct(d: Json, key: string, keepEmpty: boolean, path: string): JsonObject | undefined {
  const v = d[key];
  if (!isObject(v) || (!keepEmpty && Object.keys(v).length === 0)) return undefined;
  delete d[key];
  return struct(v, path);
}

function extraOf(d: Json, path: string): JsonObject | undefined {
  return Object.keys(d).length > 0 ? struct(d, `${path}extra`) : undefined;
}

// --- Content and Part ---------------------------------------------------------

type Flat = "plain" | "optional" | "bytes";
const FLAT_PARTS: Record<string, [string, Record<string, Flat>]> = {
  inline_data: ["inlineData", { mime_type: "plain", data: "bytes", display_name: "optional" }],
  file_data: ["fileData", { mime_type: "plain", file_uri: "plain", display_name: "optional" }],
  executable_code: ["executableCode", { language: "plain", code: "plain" }],
  code_execution_result: ["codeExecutionResult", { outcome: "plain", output: "optional" }],
};

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function flatToProto(spec: Record<string, Flat>, value: JsonValue | undefined): Record<string, string | Uint8Array> | undefined {
  if (!isObject(value) || !Object.keys(value).every((k) => k in spec)) return undefined;
  const out: Record<string, string | Uint8Array> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string" || (spec[key] !== "optional" && v === "")) return undefined;
    out[camel(key)] = spec[key] === "bytes" ? b64decode(v) : v;
  }
  return out;
}

export function contentToProto(data: Json, path = "content."): Content {
  const d = { ...data };
  const role = takeOptional(d, "role", "string") as string | undefined;
  let parts: Part[] = [];
  const raw = d.parts;
  if (Array.isArray(raw) && raw.length > 0 && raw.every(isObject)) {
    parts = raw.map((p, i) => partToProto(p as Json, `${path}parts[${i}].`));
    delete d.parts;
  }
  return create(ContentSchema, { role, parts, extra: extraOf(d, path) });
}

function callToProto(payload: "args" | "response", data: Json, path: string) {
  const d = { ...data };
  const id = takeOptional(d, "id", "string") as string | undefined;
  const name = takePlainString(d, "name");
  const body = takeStruct(d, payload, true, `${path}${payload}`);
  return { id, name, [payload]: body, extra: extraOf(d, path) };
}

function partToProto(data: Json, path: string): Part {
  const d = { ...data };
  const part = create(PartSchema);
  if (typeof d.text === "string") {
    part.data = { case: "text", value: d.text };
    delete d.text;
  } else if (isObject(d.function_call)) {
    const call = callToProto("args", d.function_call, `${path}function_call.`);
    delete d.function_call;
    part.data = { case: "functionCall", value: { $typeName: "sessionstore.v1.FunctionCall", ...call } as never };
  } else if (isObject(d.function_response)) {
    const call = callToProto("response", d.function_response, `${path}function_response.`);
    delete d.function_response;
    part.data = { case: "functionResponse", value: { $typeName: "sessionstore.v1.FunctionResponse", ...call } as never };
  } else {
    for (const [key, [field, spec]] of Object.entries(FLAT_PARTS)) {
      const flat = flatToProto(spec, d[key]);
      if (flat) {
        part.data = create(PartSchema, { data: { case: field, value: flat } as never }).data;
        delete d[key];
        break;
      }
    }
  }
  part.thought = takeOptional(d, "thought", "boolean") as boolean | undefined;
  if (typeof d.thought_signature === "string") {
    part.thoughtSignature = b64decode(d.thought_signature);
    delete d.thought_signature;
  }
  part.extra = extraOf(d, path);
  return part;
}

// --- EventActions -------------------------------------------------------------

const ACTION_DICTS = ["state_delta", "requested_auth_configs", "requested_tool_confirmations"] as const;
const ACTION_FLAGS = ["escalate", "skip_summarization", "end_of_agent"] as const;
const ACTION_TEXTS = ["transfer_to_agent", "rewind_before_invocation_id"] as const;

function isNumber(v: unknown): v is number {
  return typeof v === "number";
}

function actionsToProto(data: Json): EventActions {
  const d = { ...data };
  const msg = create(EventActionsSchema);
  const m = msg as unknown as Record<string, unknown>;
  for (const key of ACTION_DICTS) {
    if (isObject(d[key]) && Object.keys(d[key]).length === 0) delete d[key];
    m[camel(key)] = takeStruct(d, key, false, `actions.${key}`);
  }
  msg.agentState = takeStruct(d, "agent_state", true, "actions.agent_state");
  const artifacts = d.artifact_delta;
  if (isObject(artifacts) && Object.values(artifacts).every((v) => Number.isInteger(v))) {
    msg.artifactDelta = Object.fromEntries(Object.entries(artifacts).map(([k, v]) => [k, BigInt(v as number)]));
    delete d.artifact_delta;
  }
  for (const key of ACTION_FLAGS) m[camel(key)] = takeOptional(d, key, "boolean");
  for (const key of ACTION_TEXTS) m[camel(key)] = takeOptional(d, key, "string");
  const c = d.compaction;
  if (
    isObject(c) &&
    Object.keys(c).sort().join() === "compacted_content,end_timestamp,start_timestamp" &&
    isNumber(c.start_timestamp) &&
    isNumber(c.end_timestamp) &&
    isObject(c.compacted_content)
  ) {
    delete d.compaction;
    msg.compaction = {
      $typeName: "sessionstore.v1.EventCompaction",
      startTimestamp: timestampFromSeconds(c.start_timestamp),
      endTimestamp: timestampFromSeconds(c.end_timestamp),
      compactedContent: contentToProto(c.compacted_content, "actions.compaction.compacted_content."),
    };
  }
  msg.extra = extraOf(d, "actions.");
  return msg;
}

// --- Event --------------------------------------------------------------------

const EVENT_FLAGS = ["partial", "turn_complete", "interrupted"] as const;
const EVENT_TEXTS = ["branch", "error_code", "error_message", "finish_reason", "model_version"] as const;
const EVENT_METADATA = ["custom_metadata", "usage_metadata", "grounding_metadata", "citation_metadata"] as const;

/** `data` is the event as ADK's v1 schema stores it in `event_data`. */
export function pythonEventToProto(data: Json): Event {
  const d = { ...data };
  const msg = create(EventSchema);
  const m = msg as unknown as Record<string, unknown>;
  for (const key of ["id", "invocation_id", "author"] as const) {
    if (typeof d[key] === "string") {
      m[camel(key)] = d[key];
      delete d[key];
    }
  }
  if (isNumber(d.timestamp)) {
    msg.timestamp = timestampFromSeconds(d.timestamp);
    delete d.timestamp;
  }
  for (const key of EVENT_FLAGS) m[camel(key)] = takeOptional(d, key, "boolean");
  for (const key of EVENT_TEXTS) m[camel(key)] = takeOptional(d, key, "string");
  for (const key of EVENT_METADATA) m[camel(key)] = takeStruct(d, key, true, key);
  const ids = d.long_running_tool_ids;
  if (Array.isArray(ids) && ids.length > 0 && ids.every((i) => typeof i === "string")) {
    msg.longRunningToolIds = ids as string[];
    delete d.long_running_tool_ids;
  }
  if (isObject(d.content)) {
    msg.content = contentToProto(d.content);
    delete d.content;
  }
  if (isObject(d.actions)) {
    msg.actions = actionsToProto(d.actions);
    delete d.actions;
  }
  msg.extra = extraOf(d, "");
  return msg;
}
