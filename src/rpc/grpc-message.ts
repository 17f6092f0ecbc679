// The grpc-message trailer, as the gRPC spec encodes it (PROTOCOL-HTTP2.md,
// "Percent-Encoded"): the message's UTF-8 bytes, each byte outside printable
// ASCII (0x20–0x7E) and `%` itself written as %XX, everything else as is.
// Connect encodes it with encodeURIComponent, which also escapes `,` `=` `;`
// `/` and the like: grpc-js decodes with decodeURI, which leaves those
// escapes in place, so its users read `%2C` where the server wrote `,`.
// Every decoder (grpc-go, grpcio, grpc-js, Connect's decodeURIComponent)
// reads the spec's form exactly.

const HEX = "0123456789ABCDEF";

export function encodeGrpcMessage(message: string): string {
  const bytes = Buffer.from(message, "utf8");
  let out = "";
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    // A space at either end is escaped too: HTTP trims a field value's
    // surrounding whitespace, and the message must arrive as written.
    const edgeSpace = byte === 0x20 && (i === 0 || i === bytes.length - 1);
    if (byte >= 0x20 && byte <= 0x7e && byte !== 0x25 && !edgeSpace) out += String.fromCharCode(byte);
    else out += `%${HEX[byte >> 4]}${HEX[byte & 0x0f]}`;
  }
  return out;
}

/** Reads a grpc-message value that Connect wrote (encodeURIComponent). */
export function decodeConnectMessage(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
