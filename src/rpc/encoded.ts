import { type DescField, type DescMessage, type Message, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

// Responses whose protobuf encoding is already known: an appended event was
// encoded once to be stored, and encoding it again for the answer was a
// tenth of the server's work per append. A handler that knows the bytes of
// the message it returns (or streams) registers them here, and the gRPC
// handler (server/grpc/) sends them instead of encoding the message. The
// message itself stays complete: every other protocol encodes it as usual.
// Nothing may change a registered message afterwards.
const known = new WeakMap<Message, Uint8Array>();

export function withEncoding<M extends Message>(message: M, bytes: Uint8Array): M {
  known.set(message, bytes);
  return message;
}

export function knownEncoding(message: Message): Uint8Array | undefined {
  return known.get(message);
}

/**
 * The encoding of `message` followed by `stored` (messages already encoded)
 * as its length-delimited `field`. A field may come after the others, and a
 * repeated one in pieces, so this is the encoding of the whole. Call it
 * before setting that field on `message`.
 */
export function encodeWithStored<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
  field: DescField,
  stored: readonly Uint8Array[],
): Uint8Array {
  const writer = new BinaryWriter();
  writer.raw(toBinary(schema, message));
  for (const bytes of stored) writer.tag(field.number, WireType.LengthDelimited).bytes(bytes);
  return writer.finish();
}

/** `bytes`, an encoded message, as the length-delimited `field` of the message around it. */
export function asField(field: DescField, bytes: Uint8Array): Uint8Array {
  return new BinaryWriter().tag(field.number, WireType.LengthDelimited).bytes(bytes).finish();
}
