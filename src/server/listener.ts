import http from "node:http";
import http2 from "node:http2";
import net from "node:net";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

// Every HTTP/2 connection starts with this preface (RFC 9113, 3.4).
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface Listener {
  net: net.Server;
  h2: http2.Http2Server;
  h1: http.Server;
  /** Open HTTP/2 sessions, so shutdown can send GOAWAY to each. */
  sessions: Set<http2.ServerHttp2Session>;
}

/**
 * One cleartext port for gRPC (HTTP/2) and for browsers (HTTP/1.1, where
 * gRPC-Web and Connect work too). Node's h2c server cannot take HTTP/1.1, so
 * the first bytes of each connection decide which server gets it.
 */
export function createListener(handler: Handler): Listener {
  const h2 = http2.createServer({}, handler);
  const h1 = http.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  const server = net.createServer((socket) => {
    socket.once("error", () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, H2_PREFACE.length);
      const isH2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      // Undecided until the preface is complete or has diverged.
      if (isH2 && head.length < H2_PREFACE.length) return;
      socket.off("data", onData);
      socket.pause();
      socket.unshift(head);
      if (isH2) {
        // The HTTP/2 session takes over the socket's handle and reads the
        // unshifted bytes itself on the next tick; resuming here would
        // flow them out to no listener.
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  return { net: server, h2, h1, sessions };
}
