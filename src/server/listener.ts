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

/** How long a connection may keep the server waiting (see createListener). */
export interface ConnectionTimeouts {
  /** A new connection's TLS handshake or HTTP/2 preface; an HTTP/1.1 request's headers. */
  headersMs: number;
  /** An HTTP/1.1 request's body, from its headers to its end. */
  requestMs: number;
  /** An HTTP/2 connection with no open stream. */
  idleMs: number;
}

/**
 * One port for gRPC (HTTP/2) and for browsers (HTTP/1.1, where gRPC-Web and
 * Connect work too). In cleartext, Node's h2c server cannot take HTTP/1.1, so
 * the first bytes of each connection decide which server gets it; with TLS,
 * ALPN does.
 *
 * The connections are tracked here rather than by the two HTTP servers:
 * neither ever listens, and http.Server only tracks connections (for
 * closeIdleConnections) and arms its headersTimeout and requestTimeout once
 * it does. So the timeouts are kept here too, one timer per connection at a
 * time, for every phase in which a client could hold a socket without
 * asking anything:
 *
 * - accepted, until the HTTP/2 preface or the first HTTP/1.1 bytes decide the
 *   protocol (with TLS: until the handshake is done): `headersMs`;
 * - HTTP/1.1, from the connection (or the end of the previous response) until
 *   a request's headers are complete: `headersMs`; then until its body has
 *   arrived: `requestMs`. A response may take as long as it takes (a tail);
 * - HTTP/2, while no stream is open: `idleMs`, after which the session is
 *   closed with GOAWAY (gRPC clients reconnect by themselves); each stream's
 *   request body: `requestMs`. An open stream whose request has arrived, such
 *   as a tail with its heartbeats, keeps its connection.
 */
export function createListener(handler: Handler, maxMessageBytes: number, timeouts: ConnectionTimeouts, tlsFiles?: TlsFiles): Listener {
  let activeRequests = 0;
  let draining = false;
  /** Accepted, but too few bytes yet to tell HTTP/2 from HTTP/1.1. */
  const undecided = new Set<net.Socket>();
  /** HTTP/1.1 connections and their unfinished responses. */
  const h1Sockets = new Map<net.Socket, Set<http.ServerResponse>>();
  const sessions = new Set<http2.ServerHttp2Session>();
  /** Each connection's one armed timeout, if any. */
  const timers = new Map<net.Socket | http2.ServerHttp2Session, NodeJS.Timeout>();
  const arm = (key: net.Socket | http2.ServerHttp2Session, ms: number, expire: () => void) => {
    disarm(key);
    const timer = setTimeout(() => {
      timers.delete(key);
      expire();
    }, ms);
    // A waiting connection never keeps the process alive by itself.
    timer.unref();
    timers.set(key, timer);
    return timer;
  };
  const disarm = (key: net.Socket | http2.ServerHttp2Session) => {
    const timer = timers.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    timers.delete(key);
  };
  const awaitHeaders = (socket: net.Socket) => arm(socket, timeouts.headersMs, () => socket.destroy());

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
    // The headers are in; the body has its own time, and once it has
    // arrived (or the answer is out without it) nothing more is waited for.
    const timer = arm(socket, timeouts.requestMs, () => socket.destroy());
    const received = () => {
      req.off("end", received);
      res.off("close", received);
      // Unless a pipelined request after this one has armed its own.
      if (timers.get(socket) === timer) disarm(socket);
    };
    req.once("end", received);
    res.once("close", received);
    // Tells the client not to reuse the connection; Node then closes it
    // after this response instead of keeping it alive.
    if (draining) res.setHeader("connection", "close");
    res.once("close", () => {
      if (!open) return;
      open.delete(res);
      // Kept alive, the connection waits for the next request's headers.
      if (open.size === 0 && !socket.destroyed && !draining) awaitHeaders(socket);
      // A response whose headers went out before the drain began (a stream)
      // left the connection keep-alive, which would hold the shutdown open
      // for a next request that must not come. end() still delivers it.
      if (draining && open.size === 0) socket.end(() => socket.destroy());
    });
    track(req, res);
  });
  h2.on("session", (session) => {
    sessions.add(session);
    let streams = 0;
    const idle = () => arm(session, timeouts.idleMs, () => session.close());
    idle();
    session.on("stream", (stream) => {
      streams++;
      disarm(session);
      // As for HTTP/1.1: the request has `requestMs` to arrive whole (every
      // handler reads it to its end); a stream that withholds it is reset.
      const body = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), timeouts.requestMs);
      body.unref();
      stream.once("end", () => clearTimeout(body));
      stream.once("close", () => {
        clearTimeout(body);
        streams--;
        if (streams === 0 && !session.closed && !session.destroyed) idle();
      });
    });
    session.once("close", () => {
      sessions.delete(session);
      disarm(session);
    });
  });

  const dispatch = (socket: net.Socket, isH2: boolean) => {
    undecided.delete(socket);
    disarm(socket);
    if (isH2) {
      h2.emit("connection", socket);
    } else {
      h1Sockets.set(socket, new Set());
      socket.once("close", () => {
        h1Sockets.delete(socket);
        disarm(socket);
      });
      awaitHeaders(socket);
      h1.emit("connection", socket);
      socket.resume();
    }
  };

  const accept = (socket: net.Socket) => {
    socket.once("error", () => socket.destroy());
    undecided.add(socket);
    socket.once("close", () => {
      undecided.delete(socket);
      disarm(socket);
    });
  };

  let server: net.Server;
  if (tlsFiles) {
    // With TLS, ALPN names the protocol: browsers and curl get HTTP/1.1 unless
    // they ask for h2, gRPC clients always ask for h2.
    // The handshake is the TLS socket's first phase; Node times it itself.
    server = tls.createServer({ ...tlsFiles, ALPNProtocols: ["h2", "http/1.1"], handshakeTimeout: timeouts.headersMs }, (socket) => {
      // `undecided` holds the TCP socket under this TLS one; a drain must
      // not destroy it now that it carries a connection. Both name the same
      // peer, which only one live connection can have.
      for (const raw of undecided) {
        if (raw.remotePort === socket.remotePort && raw.remoteAddress === socket.remoteAddress) undecided.delete(raw);
      }
      dispatch(socket, socket.alpnProtocol === "h2");
    });
    server.on("connection", accept);
    server.on("tlsClientError", (_err, socket) => socket.destroy());
  } else {
    server = net.createServer((socket) => {
      accept(socket);
      awaitHeaders(socket);
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
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      for (const socket of undecided) socket.destroy();
      for (const session of sessions) session.destroy();
      for (const socket of h1Sockets.keys()) socket.destroy();
    },
  };
}
