import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { type Config, defaults } from "../../src/config/config.js";
import { type Logger, silentLogger } from "../../src/log/logger.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import type { OpenDatabase } from "../../src/storage/database.js";
import type { TestBackend } from "./backends.js";

export interface TestServer {
  server: RunningServer;
  database: OpenDatabase;
  client: Client<typeof SessionService>;
  clientFor<S extends DescService>(service: S): Client<S>;
  close(): Promise<void>;
}

/** A real server on a free loopback port over a fresh database, with a gRPC client. */
export async function startTestServer(
  backend: TestBackend,
  overrides: Partial<Config> = {},
  logger: Logger = silentLogger,
): Promise<TestServer> {
  const database = await backend.open();
  const server = await startServer({ ...defaults, host: "127.0.0.1", port: 0, shutdownGraceMs: 1000, ...overrides }, { logger, database });
  const transport = createGrpcTransport({ baseUrl: server.url });
  return {
    server,
    database,
    client: createClient(SessionService, transport),
    clientFor: (service) => createClient(service, transport),
    async close() {
      await server.close();
      await database.close();
    },
  };
}
