import { clone, isMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { parseTimeout } from "@connectrpc/connect/protocol-grpc";
import { AppendEventRequestSchema, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";

/**
 * When and how often a call in RETRIED_METHODS that failed with a retryable
 * code is tried again. The n-th retry waits a random time between 0 and
 * min(maxBackoffMs, initialBackoffMs * 2^(n-1)) ("full jitter", as gRPC's own
 * retry), so clients that failed together do not come back together.
 * Retries stop after maxAttempts tries in all, or when the next wait would
 * end past the call's deadline: the deadline bounds the whole call, not each
 * try. `{ maxAttempts: 1 }` turns retries off.
 */
export interface RetryPolicy {
  maxAttempts?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Defaults to UNAVAILABLE alone. */
  retryableCodes?: Code[];
  /** Called before each wait (for logs and metrics); attempt is the 1-based try that failed. */
  onRetry?: (info: { method: string; attempt: number; error: ConnectError; waitMs: number }) => void;
}

/** The same numbers as the Python and Go clients. */
export const defaultRetryPolicy = { maxAttempts: 5, initialBackoffMs: 200, maxBackoffMs: 5000 } as const;

/**
 * Calls whose repetition cannot change the outcome: reads, deletes (a missing
 * session is not an error), and appends, whose event id the client fixes
 * before the first try (the server answers a re-sent id with the stored event
 * and `duplicate` set, writing nothing). CreateSession is not among them: a
 * repeat could create a second session, or answer ALREADY_EXISTS for the one
 * the first try created. StreamEvents is resumed by the caller from its cursor.
 */
export const RETRIED_METHODS: ReadonlySet<string> = new Set(
  [
    SessionService.method.getSession,
    SessionService.method.listSessions,
    SessionService.method.listEvents,
    SessionService.method.getUserState,
    SessionService.method.appendEvent,
    SessionService.method.deleteSession,
    SessionService.method.eraseUserData,
  ].map((m) => m.name),
);

/**
 * Unary calls only (streams pass through untouched, with no deadline unless
 * the call sets one): a default deadline over all tries, an event id on
 * appends before the first try, and retries per the policy.
 */
export function unaryCallPolicy(defaultTimeoutMs: number | undefined, policy: RetryPolicy): Interceptor {
  const maxAttempts = Math.max(1, policy.maxAttempts ?? defaultRetryPolicy.maxAttempts);
  const initial = policy.initialBackoffMs ?? defaultRetryPolicy.initialBackoffMs;
  const max = policy.maxBackoffMs ?? defaultRetryPolicy.maxBackoffMs;
  const retryable = new Set(policy.retryableCodes ?? [Code.Unavailable]);
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const unary = withEventId(req);
    const timeoutMs = callTimeoutMs(unary) ?? defaultTimeoutMs;
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    const controller = new AbortController();
    const abort = () => controller.abort(unary.signal.reason);
    unary.signal.addEventListener("abort", abort);
    if (unary.signal.aborted) abort();
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeoutMs);
    const attempts = RETRIED_METHODS.has(unary.method.name) ? maxAttempts : 1;
    try {
      for (let attempt = 1; ; attempt++) {
        if (deadline !== undefined) setTimeoutHeader(unary, Math.max(1, deadline - Date.now()));
        try {
          return await next({ ...unary, signal: controller.signal });
        } catch (err) {
          if (controller.signal.aborted) throw err;
          const error = asUnavailable(err);
          if (attempt >= attempts || !retryable.has(error.code)) throw error;
          const waitMs = Math.random() * Math.min(max, initial * 2 ** (attempt - 1));
          if (deadline !== undefined && Date.now() + waitMs >= deadline) throw error;
          policy.onRetry?.({ method: unary.method.name, attempt, error, waitMs });
          if (!(await sleep(waitMs, controller.signal))) throw error;
        }
      }
    } finally {
      clearTimeout(timer);
      unary.signal.removeEventListener("abort", abort);
    }
  };
}

// Node errors that mean the connection went away under a call. connect-node
// reports some of them as ABORTED, which in this API means a stale
// revision; gRPC's other clients report them as UNAVAILABLE, and so do we.
const CONNECTION_LOST = new Set([
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_HTTP2_SESSION_ERROR",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_STREAM_CANCEL",
]);

function asUnavailable(err: unknown): ConnectError {
  const error = ConnectError.from(err);
  if (error.code === Code.Unavailable) return error;
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 8 && cause instanceof Error; depth++, cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code !== undefined && CONNECTION_LOST.has(code)) {
      return new ConnectError(error.rawMessage, Code.Unavailable, error.metadata, undefined, error.cause);
    }
  }
  return error;
}

function withEventId(req: UnaryRequest): UnaryRequest {
  if (!isMessage(req.message, AppendEventRequestSchema) || !req.message.event || req.message.event.id !== "") return req;
  // Fixed before the first try, so that every try is the same append; the
  // caller's message is left as it was.
  const message = clone(AppendEventRequestSchema, req.message);
  if (message.event) message.event.id = crypto.randomUUID();
  return { ...req, message } as UnaryRequest;
}

/** The deadline the call itself set (connect puts it in the request header). */
function callTimeoutMs(req: UnaryRequest): number | undefined {
  const grpc = req.header.get("grpc-timeout");
  if (grpc !== null) return parseTimeout(grpc, Number.MAX_SAFE_INTEGER).timeoutMs;
  const connect = req.header.get("connect-timeout-ms");
  return connect === null ? undefined : Number(connect);
}

/** Each try tells the server the time left, not the whole call's timeout. */
function setTimeoutHeader(req: UnaryRequest, ms: number): void {
  const whole = Math.ceil(ms);
  if (req.header.get("content-type")?.startsWith("application/grpc")) {
    // gRPC allows at most eight digits.
    req.header.set("grpc-timeout", whole <= 99_999_999 ? `${whole}m` : `${Math.ceil(whole / 1000)}S`);
  } else {
    req.header.set("connect-timeout-ms", String(whole));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      resolve(slept);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", aborted);
  });
}
