import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import { PgCode, sqlState } from "../storage/pg-errors.js";

// Every failure leaves the server through here. Handlers and storage throw
// ConnectError for what they expect; database errors are classified by
// SQLSTATE; anything else is a bug, logged in full and answered INTERNAL
// without internals.

const NETWORK_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);

// Messages travel in HTTP/2 headers (grpc-message), which peers cap at a few
// KiB; a message quoting a huge key would make the answer itself fail.
const MAX_MESSAGE_CHARS = 1024;

export function toConnectError(err: unknown, logger: Logger, procedure: string): ConnectError {
  const mapped = classify(err, logger, procedure);
  if (mapped.rawMessage.length <= MAX_MESSAGE_CHARS) return mapped;
  return new ConnectError(`${mapped.rawMessage.slice(0, MAX_MESSAGE_CHARS)}…`, mapped.code, mapped.metadata);
}

function classify(err: unknown, logger: Logger, procedure: string): ConnectError {
  if (err instanceof ConnectError) return err;
  const state = sqlState(err);
  switch (state) {
    case PgCode.untranslatableCharacter:
    case PgCode.characterNotInRepertoire:
    case PgCode.invalidTextRepresentation:
      return new ConnectError("a value holds a character sequence the database cannot store", Code.InvalidArgument);
    case PgCode.stackDepthExceeded:
    case PgCode.programLimitExceeded:
    case PgCode.numericOutOfRange:
      return new ConnectError("a value is too large or too deeply nested to store", Code.InvalidArgument);
    // Not ABORTED: clients read ABORTED as "your copy of the session is stale",
    // which a transient conflict between transactions is not.
    case PgCode.serializationFailure:
    case PgCode.deadlockDetected:
      return new ConnectError("the write conflicted with a concurrent one; retry", Code.Unavailable);
    case PgCode.tooManyConnections:
    case PgCode.adminShutdown:
    case PgCode.cannotConnectNow:
      return new ConnectError("the database is unavailable; retry", Code.Unavailable);
    case PgCode.queryCanceled:
      return new ConnectError("the database cancelled the query", Code.DeadlineExceeded);
  }
  const sysCode = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof sysCode === "string" && NETWORK_ERRORS.has(sysCode)) {
    return new ConnectError("the database is unreachable; retry", Code.Unavailable);
  }
  logger.error("unexpected error", { procedure, err, sqlState: state });
  return new ConnectError("internal error", Code.Internal);
}

export function errorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const procedure = req.method.name;
    try {
      const res = await next(req);
      if (!res.stream) return res;
      return {
        ...res,
        message: (async function* () {
          try {
            yield* res.message;
          } catch (err) {
            throw toConnectError(err, logger, procedure);
          }
        })(),
      };
    } catch (err) {
      throw toConnectError(err, logger, procedure);
    }
  };
}
