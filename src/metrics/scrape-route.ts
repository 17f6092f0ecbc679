import type { connectNodeAdapter } from "@connectrpc/connect-node";
import type { TokenStore } from "../auth/tokens.js";
import type { Logger } from "../log/logger.js";
import type { ServerMetrics } from "./server-metrics.js";

// The request and response types of the handler the route sits in front of.
type Request = Parameters<ReturnType<typeof connectNodeAdapter>>[0];
type Response = Parameters<ReturnType<typeof connectNodeAdapter>>[1];

/**
 * `GET /metrics` in Prometheus's text format. With tokens configured, a
 * scrape needs a bearer token with the `metrics` scope, or one for every
 * app and every user (what an administrator holds, read-only or not): a
 * token limited to some apps or to one user may not see the whole server's
 * numbers. Returns false for every other request.
 */
export function scrapeRoute(metrics: ServerMetrics, tokens: TokenStore, logger: Logger): (req: Request, res: Response) => boolean {
  return (req, res) => {
    const path = req.url?.split("?", 1)[0];
    if (path !== "/metrics") return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      answer(res, 405, "use GET\n", { allow: "GET, HEAD" });
      return true;
    }
    if (tokens.size > 0) {
      const header = req.headers.authorization;
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      const grant = match?.[1] ? tokens.lookup(match[1]) : undefined;
      if (!grant) {
        answer(res, 401, 'metrics need "authorization: Bearer <token>" with a token that has the metrics scope\n', {
          "www-authenticate": 'Bearer realm="sessionstore"',
        });
        return true;
      }
      if (!grant.scopes.has("metrics") && !(grant.apps === "*" && grant.user === undefined)) {
        logger.warn("metrics scrape refused", { token: grant.name });
        answer(res, 403, "this token may not read metrics: it needs the metrics scope, or every app and user\n");
        return true;
      }
    }
    metrics.text().then(
      (text) => answer(res, 200, req.method === "HEAD" ? "" : text, { "content-type": metrics.contentType }),
      (err: unknown) => {
        logger.error("could not collect metrics", { err });
        answer(res, 500, "could not collect metrics\n");
      },
    );
    return true;
  };
}

function answer(res: Response, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers });
  res.end(body);
}
