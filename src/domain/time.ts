import { create } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";

// Times travel as integer nanoseconds since the epoch: exact for protobuf
// Timestamps and for Python floats alike.
const NS_PER_SECOND = 1_000_000_000n;

export function timestampToNs(ts: Timestamp): bigint {
  return ts.seconds * NS_PER_SECOND + BigInt(ts.nanos);
}

export function nsToTimestamp(ns: bigint): Timestamp {
  let seconds = ns / NS_PER_SECOND;
  let nanos = ns % NS_PER_SECOND;
  if (nanos < 0n) {
    seconds -= 1n;
    nanos += NS_PER_SECOND;
  }
  return create(TimestampSchema, { seconds, nanos: Number(nanos) });
}

// Date.now() has millisecond resolution; anchoring the monotonic clock to it
// once gives distinct nanosecond times for events appended in one millisecond.
const wallAnchorNs = BigInt(Date.now()) * 1_000_000n;
const monoAnchorNs = process.hrtime.bigint();

/** Wall-clock nanoseconds since the epoch, never going backwards in this process. */
export function nowNs(): bigint {
  return wallAnchorNs + (process.hrtime.bigint() - monoAnchorNs);
}
