import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { ServerMetrics } from "./server-metrics.js";

// gRPC's names for the status codes, as dashboards and alerts spell them.
const CODE_NAMES: readonly string[] = [
  "OK",
  ...Object.values(Code)
    .filter((v): v is number => typeof v === "number" && v > 0)
    .sort((a, b) => a - b)
    .map((code) => (Code[code] as string).replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()),
];

function codeName(err: unknown): string {
  const code = err === undefined ? 0 : err instanceof ConnectError ? err.code : Code.Internal;
  return CODE_NAMES[code] ?? "UNKNOWN";
}

function protocolOf(contentType: string | null): string {
  if (contentType?.startsWith("application/grpc-web")) return "grpc_web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * Counts and times every call, on gRPC's fast path and Connect's alike (both
 * run the same interceptors). It goes first, so it sees the status the
 * caller gets: the error funnel and the auth check run inside it. A server
 * stream is measured until its last message or error. Synchronous bookkeeping
 * only: no await is added to a call.
 */
export function metricsInterceptor(metrics: ServerMetrics): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const labels = {
      service: req.service.typeName,
      method: req.method.name,
      code: "OK",
      protocol: protocolOf(req.header.get("content-type")),
    };
    const done = (err?: unknown) => {
      labels.code = codeName(err);
      metrics.rpcHandled.inc(labels);
      metrics.rpcSeconds.observe(labels, (performance.now() - started) / 1000);
    };
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      done(err);
      throw err;
    }
    if (!res.stream) {
      done();
      return res;
    }
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        let failure: unknown;
        try {
          yield* messages;
        } catch (err) {
          failure = err;
          throw err;
        } finally {
          // A stream the client left ends here through return(): a cancel.
          done(failure ?? (req.signal.aborted ? ConnectError.from(req.signal.reason, Code.Canceled) : undefined));
        }
      })(),
    };
  };
}
