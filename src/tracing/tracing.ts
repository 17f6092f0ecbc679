import { type Context, context, createContextKey, type Tracer, trace } from "@opentelemetry/api";

// What the rest of the server knows of tracing: whether it is on, the tracer,
// and the request id carried in the active context. Only @opentelemetry/api
// is imported here; the SDK and the exporter live in sdk.ts, which main.ts
// loads only when an OTLP endpoint is configured. While tracing is off every
// caller checks `tracingEnabled()` first and does nothing else: no context
// captured, no span started, no interceptor installed.

let tracer: Tracer | undefined;

/** Whether spans are recorded and exported (the SDK was started). */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** The server's tracer; only meaningful while `tracingEnabled()`. */
export function getTracer(): Tracer {
  return tracer ?? trace.getTracer("sessionstore");
}

/** Called by sdk.ts once its provider is registered, and with false when it shuts down. */
export function setTracingEnabled(on: boolean): void {
  tracer = on ? trace.getTracer("sessionstore") : undefined;
}

/** The request id of the call a context belongs to (see server/request-id.ts). */
export const REQUEST_ID = createContextKey("sessionstore.request_id");

/** Whether the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export interface TraceFields {
  trace_id?: string;
  span_id?: string;
  request_id?: string;
}

/** The active span's ids and the request id, for a log line; undefined outside a traced call. */
export function activeTraceFields(active: Context = context.active()): TraceFields | undefined {
  const span = trace.getSpan(active);
  const requestId = active.getValue(REQUEST_ID);
  if (!span && requestId === undefined) return undefined;
  const fields: TraceFields = {};
  if (span) {
    const { traceId, spanId } = span.spanContext();
    fields.trace_id = traceId;
    fields.span_id = spanId;
  }
  if (typeof requestId === "string") fields.request_id = requestId;
  return fields;
}
