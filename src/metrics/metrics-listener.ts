import http from "node:http";
import type { AddressInfo } from "node:net";

/** The optional second port that serves only `GET /metrics`. */
export interface MetricsListener {
  /** http://host:port of the listener. */
  url: string;
  close(): Promise<void>;
}

type Scrape = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/**
 * Plain HTTP/1.1 for Prometheus on its own port (SESSIONSTORE_METRICS_PORT),
 * so that a scrape can be let through a network policy without opening the
 * API. The scrape route is the main port's, with the same token rule;
 * anything else is 404.
 */
export async function listenForScrapes(host: string, port: number, scrape: Scrape): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    if (scrape(req, res)) return;
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end("this port serves only GET /metrics\n");
  });
  // A scraper holds no call open: it may wait for headers only briefly.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scrape takes milliseconds: nothing worth waiting for is cut.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
