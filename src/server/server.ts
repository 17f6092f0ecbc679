import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { AddressInfo } from "node:net";
import { file_google_protobuf_struct, file_google_protobuf_timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  file_grpc_health_v1_health,
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/ts/grpc/health/v1/health_pb.js";
import { file_grpc_reflection_v1_reflection, ServerReflection } from "../../gen/ts/grpc/reflection/v1/reflection_pb.js";
import { CheckpointService, file_sessionstore_v1_checkpoint_service } from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { ConsoleService, file_sessionstore_v1_console_service } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { file_sessionstore_v1_event } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { file_sessionstore_v1_memory_service, MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { file_sessionstore_v1_session } from "../../gen/ts/sessionstore/v1/session_pb.js";
import { file_sessionstore_v1_session_service, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { authInterceptor } from "../auth/authorize.js";
import { loadTokens } from "../auth/tokens.js";
import type { Config } from "../config/config.js";
import { consoleAssets } from "../console/assets.js";
import { HealthRegistry, healthServiceImpl } from "../health/health-service.js";
import type { Logger } from "../log/logger.js";
import { listenForScrapes, type MetricsListener } from "../metrics/metrics-listener.js";
import { metricsInterceptor } from "../metrics/rpc-interceptor.js";
import { scrapeRoute } from "../metrics/scrape-route.js";
import { ServerMetrics } from "../metrics/server-metrics.js";
import { loadPolicy } from "../policy/app-policy.js";
import { RedactorSet } from "../redact/redactor.js";
import { reflectionServiceImpl } from "../reflection/reflection-service.js";
import { Sweeper } from "../retention/sweeper.js";
import { checkpointServiceImpl } from "../rpc/checkpoint-service.js";
import { consoleServiceImpl } from "../rpc/console-service.js";
import { errorInterceptor } from "../rpc/errors.js";
import { memoryServiceImpl } from "../rpc/memory-service.js";
import { reclassifyParseErrors } from "../rpc/parse-errors.js";
import { sessionServiceImpl } from "../rpc/session-service.js";
import { CheckpointStore } from "../storage/checkpoint-store.js";
import { ConsoleQueries } from "../storage/console-queries.js";
import { type OpenDatabase, openDatabase } from "../storage/database.js";
import { MemoryStore } from "../storage/memory-store.js";
import { SessionStore } from "../storage/session-store.js";
import { StreamHub } from "../stream/hub.js";
import { traceInterceptor } from "../tracing/rpc-interceptor.js";
import { tracingEnabled } from "../tracing/tracing.js";
import { grpcHandler } from "./grpc/handler.js";
import { isAbandoned } from "./grpc/unary.js";
import { createListener, type TlsFiles } from "./listener.js";
import { assignRequestId } from "./request-id.js";
import { serviceRoute } from "./routes.js";

export interface RunningServer {
  host: string;
  port: number;
  /** http(s)://host:port, for Connect and gRPC clients alike. */
  url: string;
  database: OpenDatabase;
  store: SessionStore;
  memories: MemoryStore;
  health: HealthRegistry;
  streams: StreamHub;
  sweeper: Sweeper;
  metrics: ServerMetrics;
  /** http://host:port of the metrics-only port, when SESSIONSTORE_METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** Stops accepting, lets in-flight calls finish (up to the grace period), closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  /** An already open database (tests); otherwise one is opened from the config. */
  database?: OpenDatabase;
}

/** How long cancelled calls get to send their status once the grace period is over. */
const CANCEL_FLUSH_MS = 1000;

const files = [
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_sessionstore_v1_event,
  file_sessionstore_v1_session,
  file_sessionstore_v1_session_service,
  file_sessionstore_v1_console_service,
  file_sessionstore_v1_memory_service,
  file_sessionstore_v1_checkpoint_service,
  file_grpc_health_v1_health,
  file_grpc_reflection_v1_reflection,
];

export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const { logger } = options;
  // Configuration errors surface before anything is opened.
  const tokens = loadTokens(config.tokens, config.tokensFile);
  const policies = loadPolicy(config.policy, config.policyFile);
  const tlsFiles = readTlsFiles(config);
  if (tokens.size === 0) {
    if (!isLoopback(config.host) && !config.insecureNoAuth) {
      throw new Error(
        `refusing to listen on ${config.host} without authentication: configure SESSIONSTORE_TOKENS or SESSIONSTORE_TOKENS_FILE, or set SESSIONSTORE_INSECURE_NO_AUTH=true if this network is trusted`,
      );
    }
    if (config.metricsPort !== undefined && !isLoopback(config.metricsHost) && !config.insecureNoAuth) {
      throw new Error(
        `refusing to serve metrics on ${config.metricsHost} without authentication: configure SESSIONSTORE_TOKENS or SESSIONSTORE_TOKENS_FILE (a token with the metrics scope scrapes), set SESSIONSTORE_METRICS_HOST to a loopback address, or set SESSIONSTORE_INSECURE_NO_AUTH=true if this network is trusted`,
      );
    }
    logger.warn("no tokens configured: every caller has full access to every app", { host: config.host });
  }

  const database =
    options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.poolSize }));
  const memories = new MemoryStore(database.db, { policies });
  // The store reports what it commits to the hub; both take the retention
  // cutoff from the policies.
  const hub = new StreamHub(database, logger, {
    listenUrl: database.backend === "postgres" ? database.url : undefined,
    feedBatch: 500,
    feedPollMs: config.feedPollMs,
    retention: policies,
  });
  const metrics = new ServerMetrics();
  const store = new SessionStore(database.db, {
    policies,
    logger,
    observer: hub,
    appendBatches: config.appendBatches,
    onAppendBatch: (size, waitsMs) => {
      metrics.batchSize.observe(size);
      for (const ms of waitsMs) metrics.batchWaitSeconds.observe(ms / 1000);
    },
  });
  try {
    await memories.checkTextConfigs([policies.defaults, ...policies.overridden.map(([, p]) => p)].map((p) => p.memory.textConfig));
    await hub.start();
  } catch (err) {
    if (!options.database) await database.close();
    throw err;
  }
  const checkpoints = new CheckpointStore(database.db, policies);
  const sweeper = new Sweeper(store, policies, logger, memories, [checkpoints]);
  sweeper.start(config.sweepIntervalMs);
  const health = new HealthRegistry([SessionService.typeName, MemoryService.typeName, CheckpointService.typeName]);
  // Health follows the database without querying it per check (see
  // storage/database-health.ts).
  const followDatabase = (reachable: boolean) => health.setAll(reachable ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
  followDatabase(database.health.reachable);
  const unfollowDatabase = database.health.onChange((reachable) => {
    if (reachable) logger.info("database reachable again: serving");
    else logger.warn("database unreachable: not serving until it is back", { database: database.description });
    followDatabase(reachable);
  });
  const serviceNames = [
    SessionService.typeName,
    MemoryService.typeName,
    CheckpointService.typeName,
    ConsoleService.typeName,
    Health.typeName,
    ServerReflection.typeName,
  ];

  const shutdown = new AbortController();
  // Connect links every in-flight call to this signal: a thousand open tails
  // are a thousand listeners, by design, not a leak.
  setMaxListeners(0, shutdown.signal);
  const redactors = new RedactorSet(policies);
  metrics.follow({ database, store, hub, redactors, sweeper });
  const services = [
    serviceRoute(
      SessionService,
      sessionServiceImpl({
        store,
        memories,
        hub,
        redactors,
        streams: {
          defaultHeartbeatMs: config.heartbeatMs,
          tailCapacity: config.tailBuffer,
          readBatch: 500,
          feedLag: (scope, seconds) => metrics.feedLagSeconds.observe({ scope }, seconds),
        },
      }),
    ),
    serviceRoute(MemoryService, memoryServiceImpl({ memories, sessions: store, redactors })),
    serviceRoute(CheckpointService, checkpointServiceImpl(checkpoints)),
    serviceRoute(ConsoleService, consoleServiceImpl(new ConsoleQueries(database.db, store))),
    serviceRoute(Health, healthServiceImpl(health)),
    serviceRoute(ServerReflection, reflectionServiceImpl(files, serviceNames)),
  ];
  const interceptors = [
    // Outermost, so the span holds the whole call and ends with its final status.
    ...(tracingEnabled() ? [traceInterceptor()] : []),
    metricsInterceptor(metrics),
    errorInterceptor(logger),
    refuseAbandoned,
    ...(tokens.size > 0 ? [authInterceptor(tokens, logger)] : []),
  ];
  const connect = connectNodeAdapter({
    routes: (router: ConnectRouter) => {
      for (const route of services) route.register(router);
      reclassifyParseErrors(router);
    },
    interceptors,
    readMaxBytes: config.maxMessageBytes,
    writeMaxBytes: config.maxMessageBytes,
    shutdownSignal: shutdown.signal,
  });
  const grpc = grpcHandler({
    services: services.map((route) => route.spec),
    interceptors,
    readMaxBytes: config.maxMessageBytes,
    writeMaxBytes: config.maxMessageBytes,
    shutdownSignal: shutdown.signal,
    logger,
  });
  // The web console's files at `/` (GET); every RPC is a POST to a service path.
  const page = consoleAssets(logger);
  const scrape = scrapeRoute(metrics, tokens, logger);
  const handler: typeof connect = (req, res) => {
    assignRequestId(req, res);
    if (req.httpVersionMajor === 2 && grpc(req as Http2ServerRequest, res as Http2ServerResponse)) return;
    if (scrape(req, res)) return;
    if (page(req, res)) return;
    connect(req, res);
  };

  const listener = createListener(
    handler,
    config.maxMessageBytes,
    { headersMs: config.headersTimeoutMs, requestMs: config.requestTimeoutMs, idleMs: config.idleTimeoutMs },
    tlsFiles,
  );
  let metricsListener: MetricsListener | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      listener.net.once("error", reject);
      listener.net.listen(config.port, config.host, () => {
        listener.net.off("error", reject);
        resolve();
      });
    });
    if (config.metricsPort !== undefined) metricsListener = await listenForScrapes(config.metricsHost, config.metricsPort, scrape);
  } catch (err) {
    if (listener.net.listening) await listener.drain();
    await sweeper.stop();
    await hub.close();
    unfollowDatabase();
    if (!options.database) await database.close();
    throw err;
  }
  const address = listener.net.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `${tlsFiles ? "https" : "http"}://${host}:${address.port}`;
  logger.info("sessionstore listening", {
    url,
    database: database.description,
    auth: tokens.size > 0 ? `${tokens.size} token(s)` : "none",
    tls: tlsFiles !== undefined,
    ...(metricsListener ? { metrics: `${metricsListener.url}/metrics` } : {}),
  });

  // In-flight calls are counted per HTTP request and stream, not in an
  // interceptor: interceptors run only once a unary request's body has been
  // read, and return before a stream's last message.
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      logger.info("shutting down", { inFlight: listener.activeRequests });
      // Watch streams report NOT_SERVING and end, so load balancers move on.
      health.shutdown();
      // Tails never finish by themselves: end them now with UNAVAILABLE, and
      // their clients resume from their last cursor on another replica.
      hub.stopTails();
      // The metrics port closes with the API's: a scrape holds nothing open.
      const metricsClosed = metricsListener?.close();
      // Idle connections close now, busy ones after their last response.
      const drained = listener.drain();
      if (!(await settlesWithin(drained, config.shutdownGraceMs))) {
        logger.warn("grace period over, cancelling calls", { inFlight: listener.activeRequests });
        shutdown.abort(new ConnectError("server shutting down", Code.Unavailable));
        // A cancelled call still owes its client a status; a client that does
        // not read it must not hold the process.
        if (!(await settlesWithin(drained, CANCEL_FLUSH_MS))) listener.destroy();
        await drained;
      }
      await metricsClosed;
      await sweeper.stop();
      await hub.close();
      unfollowDatabase();
      if (!options.database) await database.close();
      logger.info("stopped");
    })();
    return closing;
  };

  return {
    host,
    port: address.port,
    url,
    database,
    store,
    memories,
    health,
    streams: hub,
    sweeper,
    metrics,
    metricsUrl: metricsListener?.url,
    close,
  };
}

/**
 * A call whose deadline ran out (grpc-js sends `grpc-timeout: 0m` for a
 * deadline already past) or whose client left before its handler started
 * does nothing: handlers do not watch the signal, so such a write would
 * otherwise be stored although the client was told it failed.
 */
const refuseAbandoned: Interceptor = (next) => (req) => {
  if (isAbandoned(req)) throw ConnectError.from(req.signal.reason, Code.Canceled);
  return next(req);
};

function readTlsFiles(config: Config): TlsFiles | undefined {
  if (!config.tlsCert && !config.tlsKey) return undefined;
  if (!config.tlsCert || !config.tlsKey) throw new Error("TLS needs both SESSIONSTORE_TLS_CERT and SESSIONSTORE_TLS_KEY");
  return { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) };
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}
