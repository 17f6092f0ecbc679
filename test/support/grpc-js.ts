import { create, type DescMessage, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";

/** grpc-js serializers for a generated message schema: the only glue a plain grpc-js client needs. */
export function codec<S extends DescMessage>(schema: S) {
  return {
    serialize: (value: MessageInitShape<S>) => Buffer.from(toBinary(schema, create(schema, value))),
    // A plain view: bytes fields would otherwise come out as slices of Buffer.
    deserialize: (bytes: Buffer) => fromBinary(schema, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
  };
}
