import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export const REQUEST_ID_HEADER = "x-request-id";

// What a proxy or client may name a request: printable ASCII without spaces,
// short enough for a log line. Anything else is replaced, not trusted.
const ACCEPTED = /^[\x21-\x7e]{1,128}$/;

/**
 * Gives every request an id: the caller's `x-request-id` when it sent a
 * sensible one, else a new UUID. It is written into the request's headers
 * (so both the gRPC fast path and Connect see it as a request header, and
 * interceptors and log lines can name it) and echoed in the response's.
 */
export function assignRequestId(req: { headers: IncomingHttpHeaders }, res: { setHeader(name: string, value: string): unknown }): string {
  const given = req.headers[REQUEST_ID_HEADER];
  let id = typeof given === "string" && ACCEPTED.test(given) ? given : undefined;
  if (id === undefined) {
    id = randomUUID();
    req.headers[REQUEST_ID_HEADER] = id;
  }
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}
