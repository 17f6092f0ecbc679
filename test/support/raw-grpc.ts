import http2 from "node:http2";
import { gunzipSync } from "node:zlib";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { afterAll, beforeAll } from "vitest";

// gRPC over a bare HTTP/2 client, byte by byte: the server's own gRPC
// handler (src/server/grpc/) must answer what Connect answers, and only raw
// requests can send the same bytes down both paths. A request that names
// gzip as its encoding goes to Connect even when its message is not
// compressed.

export const SERVICE = "/sessionstore.v1.SessionService";

/** To Connect: the header that routes a request away from the fast path. */
export const VIA_CONNECT = { "grpc-encoding": "gzip" } as const;

export function envelope(payload: Uint8Array, flags = 0): Buffer {
  return Buffer.from(encodeEnvelope(flags, payload));
}

/** One HTTP/2 connection to the server for the tests of a suite; call the result for it. */
export function rawSession(url: () => string): () => http2.ClientHttp2Session {
  let session: http2.ClientHttp2Session | undefined;
  beforeAll(() => {
    session = http2.connect(url());
  });
  afterAll(() => {
    session?.close();
  });
  return () => {
    if (!session) throw new Error("rawSession is used before its suite started");
    return session;
  };
}

export interface Frame {
  flags: number;
  /** The message, decompressed when its flag says gzip. */
  message: Uint8Array;
  /** The frame as it came on the wire. */
  raw: Buffer;
}

/** One call's answer: status and message from the trailers (or a trailers-only answer's headers). */
export class RawCall {
  headers: http2.IncomingHttpHeaders = {};
  status: string | undefined;
  message: string | undefined;
  readonly frames: Frame[] = [];
  readonly done: Promise<this>;
  readonly #stream: http2.ClientHttp2Stream;
  #pending = Buffer.alloc(0);
  #waiters: (() => void)[] = [];

  /** Resolves when the status has arrived, even while the request is still open. */
  readonly answered: Promise<void>;

  /** With `keepOpen`, the request body is sent but not ended, as by a client still sending. */
  constructor(session: http2.ClientHttp2Session, path: string, body: Uint8Array, extra: http2.OutgoingHttpHeaders = {}, keepOpen = false) {
    this.#stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...extra });
    let answer = () => {};
    this.answered = new Promise((resolve) => {
      answer = resolve;
    });
    this.done = new Promise((resolve, reject) => {
      this.#stream.on("response", (h) => {
        this.headers = h;
        if (h["grpc-status"] !== undefined) answer();
      });
      this.#stream.on("data", (chunk: Buffer) => {
        this.#pending = Buffer.concat([this.#pending, chunk]);
        while (this.#pending.length >= 5) {
          const length = this.#pending.readUInt32BE(1);
          if (this.#pending.length < 5 + length) break;
          const raw = this.#pending.subarray(0, 5 + length);
          const flags = raw[0] as number;
          const payload = raw.subarray(5);
          this.frames.push({ flags, raw, message: flags & 1 ? gunzipSync(payload) : payload });
          this.#pending = this.#pending.subarray(5 + length);
        }
        this.#poke();
      });
      this.#stream.on("trailers", (trailers) => {
        this.headers = { ...this.headers, ...trailers };
        answer();
      });
      this.#stream.on("error", reject);
      this.#stream.on("close", () => {
        const message = this.headers["grpc-message"];
        this.status = this.headers["grpc-status"] as string | undefined;
        this.message = typeof message === "string" ? decodeURIComponent(message) : undefined;
        this.#poke();
        answer();
        resolve(this);
      });
    });
    if (keepOpen) this.#stream.write(body);
    else this.#stream.end(body);
  }

  /** Resolves once `count` frames have arrived; rejects if the call ends first. */
  async frameCount(count: number): Promise<void> {
    while (this.frames.length < count) {
      if (this.#stream.closed) throw new Error(`the call ended after ${this.frames.length} of ${count} frames (status ${this.status})`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  cancel(): void {
    this.#stream.close(http2.constants.NGHTTP2_CANCEL);
  }

  #poke(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}

/** Sends one request and waits for the whole answer. */
export function rawCall(session: http2.ClientHttp2Session, path: string, body: Uint8Array, extra?: http2.OutgoingHttpHeaders) {
  return new RawCall(session, path, body, extra).done;
}

/** The one message of a unary answer. */
export function only(call: RawCall): Uint8Array {
  if (call.frames.length !== 1) throw new Error(`expected one message, got ${call.frames.length}`);
  return (call.frames[0] as Frame).message;
}
