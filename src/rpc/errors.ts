import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  AlreadyExists,
  Invalid,
  NotFound,
  OverLimit,
  Stale,
  type StoreOutcome,
  TimedOut,
  Unavailable,
  Unstorable,
  Unsupported,
} from "../domain/outcomes.js";
import type { Logger } from "../log/logger.js";
import { REQUEST_ID_HEADER } from "../server/request-id.js";
import { databaseOutcome, sqlState } from "../storage/pg-errors.js";

// Every failure leaves the server through here. Handlers throw ConnectError
// for bad requests; the store and the stream throw typed outcomes, which
// this table maps to status codes; database errors that reach here raw are
// classified first. Anything else is a bug, logged in full and answered
// INTERNAL without internals.

const STATUS: ReadonlyArray<readonly [abstract new (...args: never[]) => StoreOutcome, Code]> = [
  [NotFound, Code.NotFound],
  [AlreadyExists, Code.AlreadyExists],
  // Clients read ABORTED as "reload and retry": only a stale copy means that.
  [Stale, Code.Aborted],
  [OverLimit, Code.ResourceExhausted],
  [Unavailable, Code.Unavailable],
  [TimedOut, Code.DeadlineExceeded],
  [Unstorable, Code.InvalidArgument],
  [Invalid, Code.InvalidArgument],
  [Unsupported, Code.FailedPrecondition],
];

// Messages travel in HTTP/2 headers (grpc-message), which peers cap at a few
// KiB; a message quoting a huge key would make the answer itself fail.
const MAX_MESSAGE_CHARS = 1024;

export function toConnectError(err: unknown, logger: Logger, procedure: string, requestId?: string | null): ConnectError {
  const mapped = classify(err, logger, procedure, requestId);
  if (mapped.rawMessage.length <= MAX_MESSAGE_CHARS) return mapped;
  return new ConnectError(`${mapped.rawMessage.slice(0, MAX_MESSAGE_CHARS)}…`, mapped.code, mapped.metadata);
}

/** The status code of a typed outcome. */
export function statusOf(outcome: StoreOutcome): Code {
  for (const [type, code] of STATUS) if (outcome instanceof type) return code;
  return Code.Internal;
}

function classify(err: unknown, logger: Logger, procedure: string, requestId: string | null | undefined): ConnectError {
  if (err instanceof ConnectError) return err;
  const outcome = databaseOutcome(err);
  if (outcome) {
    const code = statusOf(outcome);
    if (code !== Code.Internal) return new ConnectError(outcome.message, code, undefined, undefined, outcome);
  }
  logger.error("unexpected error", { procedure, err, sqlState: sqlState(err), ...(requestId ? { request_id: requestId } : {}) });
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
            throw toConnectError(err, logger, procedure, req.header.get(REQUEST_ID_HEADER));
          }
        })(),
      };
    } catch (err) {
      throw toConnectError(err, logger, procedure, req.header.get(REQUEST_ID_HEADER));
    }
  };
}
