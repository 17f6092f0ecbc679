// Where a tail is in the log.
//
// Across sessions the order is (tx, pos): the writing transaction's id, then
// the row's global position. Only rows whose tx is below the oldest running
// transaction (the snapshot's xmin, "the watermark") are read, because any
// row above it may still be joined by one that commits late with a smaller
// tx. A position is always a stored row's (see EventLog.now). Within one
// session the order is simply seq.

export interface LogPosition {
  tx: bigint;
  pos: bigint;
}

export const ORIGIN: LogPosition = { tx: 0n, pos: 0n };

export function compare(a: LogPosition, b: LogPosition): number {
  if (a.tx !== b.tx) return a.tx < b.tx ? -1 : 1;
  if (a.pos !== b.pos) return a.pos < b.pos ? -1 : 1;
  return 0;
}

export function later(a: LogPosition, b: LogPosition): LogPosition {
  return compare(a, b) >= 0 ? a : b;
}
