import type { DescMessage, Message, UnknownField } from "@bufbuild/protobuf";
import { invalid } from "./validate.js";

// A field number this server does not know (a client built on a newer
// proto) decodes into a message's `$unknown`, and the runtime writes it back
// out on encoding: stored and served verbatim, past redaction, which only
// reads fields it knows. Anything stored is therefore refused when it
// carries one, with the field's number and place, and nothing is written.
// Dropping it instead would lose what the client believes it stored.
//
// google.protobuf.Struct, Value and ListValue are the exception that needs no
// rule: protobuf-es decodes them into plain JSON, which has no place for
// unknown fields, so the runtime drops them before any handler runs.

const JSON_TYPES = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

type Reflected = Record<string, unknown> & { $unknown?: UnknownField[] };

/** Throws INVALID_ARGUMENT naming the first unknown field of `message` or of a message inside it. */
export function refuseUnknownFields(desc: DescMessage, message: Message, path: string): void {
  walk(desc, message as unknown as Reflected, path);
}

function walk(desc: DescMessage, msg: Reflected, path: string): void {
  const unknown = msg.$unknown;
  if (unknown && unknown.length > 0) {
    const numbers = [...new Set(unknown.map((u) => u.no))].sort((a, b) => a - b);
    const many = numbers.length > 1;
    throw invalid(
      `${path} (${desc.typeName}) has unknown field${many ? "s" : ""} ${numbers.join(", ")}: ` +
        `${many ? "field numbers" : "a field number"} this server does not know (a client built on a newer API?); ` +
        "it stores nothing it cannot read, so nothing was written",
    );
  }
  for (const field of desc.fields) {
    if (field.fieldKind !== "message" && field.fieldKind !== "list" && field.fieldKind !== "map") continue;
    let value: unknown;
    if (field.oneof) {
      const oneof = msg[field.oneof.localName] as { case?: string; value?: unknown };
      if (oneof.case !== field.localName) continue;
      value = oneof.value;
    } else {
      value = msg[field.localName];
    }
    if (value === undefined || value === null) continue;
    const at = `${path}.${field.name}`;
    if (field.fieldKind === "message") {
      if (!JSON_TYPES.has(field.message.typeName)) walk(field.message, value as Reflected, at);
    } else if (field.fieldKind === "list") {
      if (field.listKind === "message" && !JSON_TYPES.has(field.message.typeName)) {
        for (const [i, item] of (value as Reflected[]).entries()) walk(field.message, item, `${at}[${i}]`);
      }
    } else if (field.mapKind === "message" && !JSON_TYPES.has(field.message.typeName)) {
      for (const [k, item] of Object.entries(value as Record<string, Reflected>)) walk(field.message, item, `${at}[${JSON.stringify(k)}]`);
    }
  }
}
