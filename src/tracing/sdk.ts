import { context, type DiagLogger, DiagLogLevel, diag, ROOT_CONTEXT } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Logger } from "../log/logger.js";
import { setTracingEnabled } from "./tracing.js";

// The OpenTelemetry SDK, set up once, by main.ts, and only when the standard
// variables ask for traces (tracingConfigured in tracing.ts): without them
// this module and the SDK are never loaded. The SDK reads its own variables:
// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT and _COMPRESSION
// (the exporter), OTEL_TRACES_SAMPLER and _ARG (the provider), OTEL_BSP_*
// (the batch processor), OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the
// resource). Spans go out over OTLP/HTTP with JSON bodies.

const MAX_DETAIL = 1000;

export interface Tracing {
  /** Sends the spans still buffered and stops; the server calls it last on shutdown. */
  shutdown(): Promise<void>;
}

export function startTracing(logger: Logger): Tracing {
  diag.setLogger(diagToLogger(logger), DiagLogLevel.WARN);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: "sessionstore" }))
    .merge(detectResources({ detectors: [envDetector] }));
  const exporter = new OTLPTraceExporter();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // The AsyncLocalStorage context manager and the W3C trace-context and
  // baggage propagators, as the API's globals.
  provider.register();
  setTracingEnabled(true);
  logger.info("exporting traces over OTLP", {
    endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    service: resource.attributes[ATTR_SERVICE_NAME],
  });
  return {
    async shutdown() {
      try {
        await provider.shutdown();
      } catch (err) {
        logger.warn("could not flush traces", { err });
      } finally {
        setTracingEnabled(false);
      }
    },
  };
}

/** The SDK's own complaints (an export that failed, a bad variable), as warnings outside any call's trace. */
function diagToLogger(logger: Logger): DiagLogger {
  const warn = (message: string, ...args: unknown[]) =>
    context.with(ROOT_CONTEXT, () =>
      logger.warn("tracing failed", { detail: [message, ...args.map(String)].join(" ").slice(0, MAX_DETAIL) }),
    );
  const ignore = () => {};
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}
