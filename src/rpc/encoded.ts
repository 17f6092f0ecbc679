import type { Message } from "@bufbuild/protobuf";

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

/** The encoding of a length-delimited field: tag, length, bytes. */
export function lengthDelimited(fieldNumber: number, bytes: Uint8Array): Uint8Array {
  const head: number[] = [];
  for (let v = (fieldNumber << 3) | 2; ; v >>>= 7) {
    if (v < 0x80) {
      head.push(v);
      break;
    }
    head.push((v & 0x7f) | 0x80);
  }
  for (let v = bytes.length; ; v = Math.floor(v / 128)) {
    if (v < 0x80) {
      head.push(v);
      break;
    }
    head.push((v % 128) | 0x80);
  }
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head, 0);
  out.set(bytes, head.length);
  return out;
}
