import { StoreOutcome, TimedOut, Unavailable, Unstorable } from "../domain/outcomes.js";

// SQLSTATE codes the service reacts to. Both drivers put them on `code`.
export const PgCode = {
  serializationFailure: "40001",
  deadlockDetected: "40P01",
  untranslatableCharacter: "22P05",
  invalidTextRepresentation: "22P02",
  characterNotInRepertoire: "22021",
  programLimitExceeded: "54000",
  stackDepthExceeded: "54001",
  numericOutOfRange: "22003",
  tooManyConnections: "53300",
  adminShutdown: "57P01",
  crashShutdown: "57P02",
  cannotConnectNow: "57P03",
  databaseDropped: "57P04",
  idleSessionTimeout: "57P05",
  idleInTransactionTimeout: "25P03",
  queryCanceled: "57014",
} as const;

export function sqlState(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

// Socket errors: the server is not there, or the connection to it broke.
const NETWORK_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
]);

// SQLSTATEs that mean the session is gone or none can be had now: class 08
// (connection exception), and the server shutting down, restarting, full or
// dropping the database.
const GONE_STATES = new Set<string>([
  PgCode.adminShutdown,
  PgCode.crashShutdown,
  PgCode.cannotConnectNow,
  PgCode.databaseDropped,
  PgCode.idleSessionTimeout,
  PgCode.idleInTransactionTimeout,
  PgCode.tooManyConnections,
]);

// Errors the drivers raise without a code when the connection broke or none
// could be had: pg's client and pool, and PGlite once it is closed or its
// WebAssembly instance has trapped (nothing works in it after that).
const GONE_MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Cannot use a pool after calling end on the pool|Query read timeout|timeout expired|PGlite is clos(ed|ing))$/;

/** A SQLSTATE, socket code or message of `err` or of an error in its `cause` chain that means the database went away. */
export function isConnectionLoss(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === "object" && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const state = sqlState(e);
    if (state !== undefined && (state.startsWith("08") || GONE_STATES.has(state))) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_ERRORS.has(code)) return true;
    // A WebAssembly trap, or emscripten's abort() after one.
    if (e instanceof Error && (e.name === "RuntimeError" || e.message.startsWith("Aborted("))) return true;
    if (e instanceof Error && GONE_MESSAGES.test(e.message)) return true;
  }
  return false;
}

// Failures of getting a connection at all: nothing was sent.
const REFUSED_STATES = new Set<string>([PgCode.cannotConnectNow, PgCode.tooManyConnections, "08001", "08004"]);
const REFUSED_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);
const REFUSED_MESSAGES =
  /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout|timeout expired|Cannot use a pool after calling end on the pool|PGlite is clos(ed|ing))$/;

/**
 * Whether `err` happened before anything reached the database: no
 * connection could be had. A write that failed so was certainly not
 * committed; after any other connection loss it may have been.
 */
export function isConnectRefused(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === "object" && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const state = sqlState(e);
    if (state !== undefined && REFUSED_STATES.has(state)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && REFUSED_CODES.has(code)) return true;
    if (e instanceof Error && REFUSED_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * A database driver's error in the store's words, or undefined when it is
 * not one the store expects (a bug: the edge logs it and answers INTERNAL).
 */
export function databaseOutcome(err: unknown): StoreOutcome | undefined {
  if (err instanceof StoreOutcome) return err;
  switch (sqlState(err)) {
    case PgCode.untranslatableCharacter:
    case PgCode.characterNotInRepertoire:
    case PgCode.invalidTextRepresentation:
      return new Unstorable("a value holds a character sequence the database cannot store", { cause: err });
    case PgCode.stackDepthExceeded:
    case PgCode.programLimitExceeded:
    case PgCode.numericOutOfRange:
      return new Unstorable("a value is too large or too deeply nested to store", { cause: err });
    // Not stale: clients read that as "your copy of the session is old",
    // which a transient conflict between transactions is not.
    case PgCode.serializationFailure:
    case PgCode.deadlockDetected:
      return new Unavailable("the write conflicted with a concurrent one; retry", false, { cause: err });
    case PgCode.queryCanceled:
      return new TimedOut("the database cancelled the query", { cause: err });
  }
  if (isConnectionLoss(err)) return new Unavailable("the database is unavailable; retry", false, { cause: err });
  return undefined;
}
