// What the store and the stream report when an operation does not succeed,
// in their own words. Nothing below src/rpc/ knows what a status code is:
// src/rpc/errors.ts maps each of these to one, in one table.
//
// Each carries the numbers a caller needs to act (the current revision, the
// limit and the size), so the message at the edge is built from facts, not
// parsed from text.

/** The base of every typed outcome; `instanceof StoreOutcome` tells them from bugs. */
export abstract class StoreOutcome extends Error {
  abstract readonly kind: string;
}

/** The thing addressed does not exist (or is expired, or belongs to someone else). */
export class NotFound extends StoreOutcome {
  readonly kind = "not_found";
}

/** A caller-chosen id is already taken. */
export class AlreadyExists extends StoreOutcome {
  readonly kind = "already_exists";
}

/** The caller's copy is older than what is stored. */
export class Stale extends StoreOutcome {
  readonly kind = "stale";
  constructor(
    message: string,
    readonly expected: bigint,
    readonly current: bigint,
  ) {
    super(message);
  }
}

/** A write would pass a configured cap; nothing was written. */
export class OverLimit extends StoreOutcome {
  readonly kind = "over_limit";
  constructor(
    message: string,
    /** The limit's name as configured, e.g. `maxStateBytes`. */
    readonly limit: string,
    readonly value: number,
    readonly max: number,
  ) {
    super(message);
  }
}

/**
 * The database cannot be reached, went away, or refused the work for a
 * transient reason. Retrying later is right. `commitUnknown` is set when a
 * write may or may not have committed: retrying with the same ids is safe
 * because writes are idempotent on them.
 */
export class Unavailable extends StoreOutcome {
  readonly kind = "unavailable";
  constructor(
    message: string,
    readonly commitUnknown = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The database took too long, or cancelled the statement. */
export class TimedOut extends StoreOutcome {
  readonly kind = "timed_out";
}

/** A value the database cannot hold (a character it cannot store, a number out of range, nesting too deep). */
export class Unstorable extends StoreOutcome {
  readonly kind = "unstorable";
}

/** The request is well formed but this deployment cannot serve it (a missing extension, a disabled feature). */
export class Unsupported extends StoreOutcome {
  readonly kind = "unsupported";
}

/** The request names something that cannot be used as given (a cursor for another scope, a seq past the end). */
export class Invalid extends StoreOutcome {
  readonly kind = "invalid";
}
