import type { AddressInfo } from "node:net";
import { file_google_protobuf_struct, file_google_protobuf_timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_grpc_health_v1_health, Health, HealthCheckResponse_ServingStatus } from "../../gen/ts/grpc/health/v1/health_pb.js";
import { file_grpc_reflection_v1_reflection, ServerReflection } from "../../gen/ts/grpc/reflection/v1/reflection_pb.js";
import { file_sessionstore_v1_event } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { file_sessionstore_v1_session } from "../../gen/ts/sessionstore/v1/session_pb.js";
import { file_sessionstore_v1_session_service, SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import type { Config } from "../config/config.js";
import { HealthRegistry, healthServiceImpl } from "../health/health-service.js";
import type { Logger } from "../log/logger.js";
import { reflectionServiceImpl } from "../reflection/reflection-service.js";
import { errorInterceptor } from "../rpc/errors.js";
import { sessionServiceImpl } from "../rpc/session-service.js";
import { type OpenDatabase, openDatabase } from "../storage/database.js";
import { SessionStore } from "../storage/session-store.js";
import { createListener } from "./listener.js";

export interface RunningServer {
  host: string;
  port: number;
  /** http://host:port, for Connect and gRPC clients alike. */
  url: string;
  database: OpenDatabase;
  store: SessionStore;
  health: HealthRegistry;
  /** Stops accepting, lets in-flight calls finish (up to the grace period), closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  /** An already open database (tests); otherwise one is opened from the config. */
  database?: OpenDatabase;
}

const files = [
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_sessionstore_v1_event,
  file_sessionstore_v1_session,
  file_sessionstore_v1_session_service,
  file_grpc_health_v1_health,
  file_grpc_reflection_v1_reflection,
];

export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const { logger } = options;
  const database =
    options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.poolSize }));
  const store = new SessionStore(database.db);
  const health = new HealthRegistry([SessionService.typeName]);
  const serviceNames = [SessionService.typeName, Health.typeName, ServerReflection.typeName];

  const shutdown = new AbortController();
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const handler = connectNodeAdapter({
    routes: (router: ConnectRouter) => {
      router.service(SessionService, sessionServiceImpl(store));
      router.service(Health, healthServiceImpl(health));
      router.service(ServerReflection, reflectionServiceImpl(files, serviceNames));
    },
    interceptors: [
      errorInterceptor(logger),
      (next) => async (req) => {
        inFlight++;
        try {
          return await next(req);
        } finally {
          // Streams count until their response is fully produced.
          inFlight--;
          if (inFlight === 0) idle?.();
        }
      },
    ],
    readMaxBytes: config.maxMessageBytes,
    writeMaxBytes: config.maxMessageBytes,
    shutdownSignal: shutdown.signal,
  });

  const listener = createListener(handler);
  await new Promise<void>((resolve, reject) => {
    listener.net.once("error", reject);
    listener.net.listen(config.port, config.host, () => {
      listener.net.off("error", reject);
      resolve();
    });
  });
  const address = listener.net.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  logger.info("sessionstore listening", { url: `http://${host}:${address.port}`, database: database.description });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      logger.info("shutting down", { inFlight });
      health.setAll(HealthCheckResponse_ServingStatus.NOT_SERVING);
      const stopped = new Promise<void>((resolve) => listener.net.close(() => resolve()));
      // GOAWAY lets clients finish their open streams and go elsewhere for new ones.
      for (const session of listener.sessions) session.close();
      listener.h1.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, config.shutdownGraceMs);
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      shutdown.abort(new ConnectError("server shutting down", Code.Unavailable));
      for (const session of listener.sessions) session.destroy();
      listener.h1.closeAllConnections();
      await stopped;
      if (!options.database) await database.close();
      logger.info("stopped");
    })();
    return closing;
  };

  return { host, port: address.port, url: `http://${host}:${address.port}`, database, store, health, close };
}
