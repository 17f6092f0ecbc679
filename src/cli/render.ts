import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";

// How events read on a terminal: one line each, author coloured, then what
// the event carries (text, function calls and responses, state delta).

export interface Paint {
  dim(s: string): string;
  bold(s: string): string;
  author(name: string, s: string): string;
  call(s: string): string;
  response(s: string): string;
  delta(s: string): string;
  error(s: string): string;
}

const codes = (open: number) => (s: string) => `\u001b[${open}m${s}\u001b[0m`;
const AUTHOR_COLOURS = [36, 32, 35, 34, 33, 96, 92, 95];

export const colours: Paint = {
  dim: codes(2),
  bold: codes(1),
  author: (name, s) => (name === "user" ? codes(1)(s) : codes(AUTHOR_COLOURS[hash(name) % AUTHOR_COLOURS.length] as number)(s)),
  call: codes(33),
  response: codes(35),
  delta: codes(36),
  error: codes(31),
};

const same = (s: string) => s;
export const noColours: Paint = { dim: same, bold: same, author: (_, s) => s, call: same, response: same, delta: same, error: same };

/** Colours on a terminal unless NO_COLOR is set; FORCE_COLOR turns them on anywhere. */
export function paintFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Paint {
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return colours;
  return stream.isTTY && !env.NO_COLOR ? colours : noColours;
}

function hash(s: string): number {
  let h = 0;
  for (const c of s) h = (h * 31 + (c.codePointAt(0) ?? 0)) >>> 0;
  return h;
}

export function formatTime(event: Event): string {
  if (!event.timestamp) return "-".repeat(23);
  return timestampDate(event.timestamp).toISOString().replace("T", " ").replace("Z", "");
}

function short(value: unknown, max = 160): string {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  const flat = (s ?? "").replace(/\s+/g, " ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One line: time, seq, author, then text, calls, responses, errors and the state delta. */
export function eventLine(event: Event, paint: Paint, where?: string): string {
  const parts: string[] = [];
  for (const part of event.content?.parts ?? []) {
    switch (part.data.case) {
      case "text":
        parts.push(part.thought ? paint.dim(`(thought) ${short(part.data.value)}`) : short(part.data.value, 400));
        break;
      case "functionCall":
        parts.push(paint.call(`→ ${part.data.value.name}(${short(jsonOf(part.data.value.args) ?? {}, 200)})`));
        break;
      case "functionResponse":
        parts.push(paint.response(`← ${part.data.value.name}: ${short(jsonOf(part.data.value.response) ?? {}, 200)}`));
        break;
      case "inlineData":
        parts.push(paint.dim(`[${part.data.value.mimeType}, ${part.data.value.data.length} bytes]`));
        break;
      case "fileData":
        parts.push(paint.dim(`[${part.data.value.mimeType} ${part.data.value.fileUri}]`));
        break;
      case "executableCode":
        parts.push(paint.call(`⟨${part.data.value.language}⟩ ${short(part.data.value.code, 200)}`));
        break;
      case "codeExecutionResult":
        parts.push(paint.response(`⟨${part.data.value.outcome}⟩ ${short(part.data.value.output ?? "", 200)}`));
        break;
      default:
        break;
    }
  }
  if (event.errorCode || event.errorMessage) parts.push(paint.error(`error ${event.errorCode ?? ""} ${event.errorMessage ?? ""}`.trim()));
  const actions = event.actions;
  if (actions?.transferToAgent) parts.push(paint.dim(`transfer → ${actions.transferToAgent}`));
  if (actions?.escalate) parts.push(paint.dim("escalate"));
  if (actions?.rewindBeforeInvocationId) parts.push(paint.dim(`rewind before ${actions.rewindBeforeInvocationId}`));
  const delta = actions?.stateDelta ? Object.entries(actions.stateDelta) : [];
  if (delta.length > 0) parts.push(paint.delta(`Δ ${delta.map(([k, v]) => `${k}=${short(v, 60)}`).join(" ")}`));
  const head = [
    paint.dim(formatTime(event)),
    paint.dim(`#${event.seq}`),
    ...(where ? [paint.dim(where)] : []),
    paint.author(event.author, event.author || "?"),
  ];
  return `${head.join(" ")}  ${parts.join("  ") || paint.dim("(no content)")}`;
}

function jsonOf(value: unknown): unknown {
  return value ?? undefined;
}

export function eventJson(event: Event): JsonValue {
  return toJson(EventSchema, event);
}
