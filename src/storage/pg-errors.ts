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
  cannotConnectNow: "57P03",
  queryCanceled: "57014",
} as const;

export function sqlState(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

const NETWORK_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);

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
    case PgCode.tooManyConnections:
    case PgCode.adminShutdown:
    case PgCode.cannotConnectNow:
      return new Unavailable("the database is unavailable; retry", false, { cause: err });
    case PgCode.queryCanceled:
      return new TimedOut("the database cancelled the query", { cause: err });
  }
  const sysCode = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof sysCode === "string" && NETWORK_ERRORS.has(sysCode)) {
    return new Unavailable("the database is unreachable; retry", false, { cause: err });
  }
  return undefined;
}
