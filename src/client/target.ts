import { isIP } from "node:net";

/**
 * The base URL for a target in any of the forms every Sessionstore client
 * takes: the URL the server logs (`http://host:port` plaintext,
 * `https://host:port` TLS), or a gRPC target (`host:port`, `dns:///host:port`),
 * which is plaintext to a loopback host and TLS to any other.
 */
export function baseUrlOf(target: string): string {
  if (/^https?:\/\//i.test(target)) {
    if (!URL.canParse(target) || !new URL(target).hostname) {
      throw new Error(`sessionstore: target "${target}": want http(s)://host[:port]`);
    }
    return target;
  }
  const hostPort = target.startsWith("dns:///") ? target.slice("dns:///".length) : target;
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s/:[\]]+):\d+$/.test(hostPort)) {
    throw new Error(`sessionstore: target "${target}": want host:port, http://host:port or https://host:port`);
  }
  return `${isLoopback(hostPort) ? "http" : "https"}://${hostPort}`;
}

export function isLoopback(hostPort: string): boolean {
  const host = hostPort.slice(0, hostPort.lastIndexOf(":")).replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || /^(0{0,4}:){7}0{0,3}1$/.test(host);
  return false;
}
