import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "../log/logger.js";

// The request and response types of the handler the console sits in front of.
type Request = Parameters<ReturnType<typeof connectNodeAdapter>>[0];
type Response = Parameters<ReturnType<typeof connectNodeAdapter>>[1];

/**
 * The page's headers. Scripts and styles come only from this origin and
 * nothing inline runs (the console builds every node with textContent), so an
 * event that smuggles markup into the page still cannot execute. No framing
 * (clickjacking on the delete buttons), no sniffing, no referrer leaking
 * session ids in URLs.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
  /** Vite names these by content hash: they never change under one URL. */
  immutable: boolean;
}

/**
 * Serves the built console (console/dist) at `/`. The files are read once at
 * start; the few hundred KiB stay in memory. Returns a handler that answers
 * GET and HEAD for the console's own paths and returns false for anything
 * else (every RPC is a POST, or a GET to a service path).
 */
export function consoleAssets(logger: Logger, dir = findDist()): (req: Request, res: Response) => boolean {
  const assets = new Map<string, Asset>();
  if (dir) {
    for (const file of walk(dir)) {
      const path = `/${relative(dir, file).split(sep).join("/")}`;
      const body = readFileSync(file);
      const ext = path.slice(path.lastIndexOf("."));
      assets.set(path, {
        body,
        type: TYPES[ext] ?? "application/octet-stream",
        etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
        immutable: path.startsWith("/assets/"),
      });
    }
  }
  if (!assets.has("/index.html")) logger.warn("web console not found: run `npm run build:console`", { dir: dir ?? null });

  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const url = req.url ?? "/";
    const path = url.split("?")[0] ?? "/";
    const asset = assets.get(path === "/" ? "/index.html" : path);
    if (!asset) {
      if (path !== "/") return false;
      send(res, 503, "text/plain; charset=utf-8", Buffer.from("The web console is not built: run `npm run build:console`.\n"), req);
      return true;
    }
    res.setHeader("etag", asset.etag);
    res.setHeader("cache-control", asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
    if (req.headers["if-none-match"] === asset.etag) {
      send(res, 304, asset.type, undefined, req);
      return true;
    }
    send(res, 200, asset.type, asset.body, req);
    return true;
  };
}

function send(res: Response, status: number, type: string, body: Buffer | undefined, req: Request): void {
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.setHeader(name, value);
  res.setHeader("content-type", type);
  if (body) res.setHeader("content-length", body.length);
  res.statusCode = status;
  if (req.method === "HEAD" || !body) res.end();
  else res.end(body);
}

/** console/dist next to src/ (tsx) or next to dist/src/ (the compiled package). */
function findDist(): string | undefined {
  for (const up of ["../../console/dist", "../../../console/dist"]) {
    const dir = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(join(dir, "index.html"))) return dir;
  }
  return undefined;
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}
