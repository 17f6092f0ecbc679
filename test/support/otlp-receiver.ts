import http from "node:http";
import type { AddressInfo } from "node:net";

// An OTLP/HTTP trace receiver in the test's process: it takes the export
// requests a server sends (JSON, as @opentelemetry/exporter-trace-otlp-http
// encodes them) and keeps every span, so tests can wait for the ones they
// expect instead of sleeping.

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: { traceId: string; spanId: string }[];
  events?: { name: string; attributes?: OtlpAttribute[] }[];
  status?: { code?: number; message?: string };
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
  }
  return out;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests received, whatever they held. */
  requests = 0;
  readonly #server = http.createServer((req, res) => this.#receive(req, res));
  #waiters: (() => void)[] = [];
  #url = "";

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  get url(): string {
    return this.#url;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** Resolves with the first span (received so far or later) that matches. */
  async waitFor(what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
    for (;;) {
      const found = this.spans.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
      if (this.#server.listening === false) throw new Error(`receiver closed while waiting for ${what}`);
    }
  }

  #receive(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      this.requests++;
      if (req.method !== "POST" || req.url !== "/v1/traces" || !req.headers["content-type"]?.startsWith("application/json")) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as OtlpExport;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributes(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            this.spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              traceState: span.traceState ?? "",
              name: span.name,
              kind: span.kind,
              attributes: attributes(span.attributes),
              links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              events: (span.events ?? []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
              status: span.status ?? {},
              resource,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    });
  }
}
