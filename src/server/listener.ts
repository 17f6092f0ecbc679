import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

// Every HTTP/2 connection starts with this preface (RFC 9113, 3.4).
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface Listener {
  net: net.Server;
  /** Requests (HTTP/1.1) and streams (HTTP/2) whose response has not finished. */
  readonly activeRequests: number;
  /**
   * Stops accepting, closes idle connections at once and every other one as
   * soon as its last response has finished. Resolves when no connection is left.
   */
  drain(): Promise<void>;
  /** Cuts every remaining connection, finished or not. */
  destroy(): void;
}

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/**
 * One port for gRPC (HTTP/2) and for browsers (HTTP/1.1, where gRPC-Web and
 * Connect work too). In cleartext, Node's h2c server cannot take HTTP/1.1, so
 * the first bytes of each connection decide which server gets it; with TLS,
 * ALPN does.
 *
 * The connections are tracked here rather than by the two HTTP servers:
 * neither ever listens, and http.Server only tracks connections (for
 * closeIdleConnections) once it does.
 */
export function createListener(handler: Handler, maxMessageBytes: number, tlsFiles?: TlsFiles): Listener {
  let activeRequests = 0;
  let draining = false;
  /** Accepted, but too few bytes yet to tell HTTP/2 from HTTP/1.1. */
  const undecided = new Set<net.Socket>();
  /** HTTP/1.1 connections and their unfinished responses. */
  const h1Sockets = new Map<net.Socket, Set<http.ServerResponse>>();
  const sessions = new Set<http2.ServerHttp2Session>();

  const track: Handler = (req, res) => {
    activeRequests++;
    res.once("close", () => {
      activeRequests--;
    });
    handler(req, res);
  };
  // Node refuses a session (ENHANCE_YOUR_CALM) that buffers more than
  // maxSessionMemory MiB, 10 by default: a message at the size limit must fit
  // so it can be refused with RESOURCE_EXHAUSTED instead.
  const maxSessionMemory = Math.max(10, Math.ceil((2 * maxMessageBytes) / (1024 * 1024)));
  const h2 = http2.createServer({ maxSessionMemory }, track);
  const h1 = http.createServer((req, res) => {
    const socket = req.socket;
    const open = h1Sockets.get(socket);
    open?.add(res);
    // Tells the client not to reuse the connection; Node then closes it
    // after this response instead of keeping it alive.
    if (draining) res.setHeader("connection", "close");
    res.once("close", () => {
      if (!open) return;
      open.delete(res);
      // A response whose headers went out before the drain began (a stream)
      // left the connection keep-alive, which would hold the shutdown open
      // for a next request that must not come. end() still delivers it.
      if (draining && open.size === 0) socket.end(() => socket.destroy());
    });
    track(req, res);
  });
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });

  const dispatch = (socket: net.Socket, isH2: boolean) => {
    undecided.delete(socket);
    if (isH2) {
      h2.emit("connection", socket);
    } else {
      h1Sockets.set(socket, new Set());
      socket.once("close", () => h1Sockets.delete(socket));
      h1.emit("connection", socket);
      socket.resume();
    }
  };

  const accept = (socket: net.Socket) => {
    socket.once("error", () => socket.destroy());
    undecided.add(socket);
    socket.once("close", () => undecided.delete(socket));
  };

  let server: net.Server;
  if (tlsFiles) {
    // With TLS, ALPN names the protocol: browsers and curl get HTTP/1.1 unless
    // they ask for h2, gRPC clients always ask for h2.
    server = tls.createServer({ ...tlsFiles, ALPNProtocols: ["h2", "http/1.1"] }, (socket) =>
      dispatch(socket, socket.alpnProtocol === "h2"),
    );
    server.on("connection", accept);
    server.on("tlsClientError", (_err, socket) => socket.destroy());
  } else {
    server = net.createServer((socket) => {
      accept(socket);
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
        // The HTTP/2 session takes over the socket's handle and reads the
        // unshifted bytes itself on the next tick; `dispatch` resumes only
        // HTTP/1.1 sockets, since resuming an HTTP/2 one here would flow the
        // bytes out to no listener.
        dispatch(socket, isH2);
      };
      socket.on("data", onData);
    });
  }

  let drained: Promise<void> | undefined;
  return {
    net: server,
    get activeRequests() {
      return activeRequests;
    },
    drain() {
      drained ??= new Promise<void>((resolve) => {
        draining = true;
        // The callback runs once the last connection has closed.
        server.close(() => resolve());
        // Nothing was asked on these yet, so nothing is lost.
        for (const socket of undecided) socket.destroy();
        // GOAWAY: open streams finish, then Node closes the session by itself
        // (at once when it has none).
        for (const session of sessions) session.close();
        for (const [socket, open] of h1Sockets) {
          if (open.size === 0) socket.destroy();
          for (const res of open) if (!res.headersSent) res.setHeader("connection", "close");
        }
      });
      return drained;
    },
    destroy() {
      for (const socket of undecided) socket.destroy();
      for (const session of sessions) session.destroy();
      for (const socket of h1Sockets.keys()) socket.destroy();
    },
  };
}
