import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { inject } from "vitest";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { type Config, defaults } from "../../src/config/config.js";
import { silentLogger } from "../../src/log/logger.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { openDatabase } from "../../src/storage/database.js";
import { createTestDatabase } from "./postgres.js";

export interface Replica {
  server: RunningServer;
  client: Client<typeof SessionService>;
}

export interface ReplicaSet {
  replicas: Replica[];
  close(): Promise<void>;
}

export const postgresAvailable = () => inject("postgresAdminUrl") !== "";

/** Several server processes' worth of servers (each with its own pool and LISTEN connection) on one fresh Postgres database. */
export async function startReplicas(count: number, overrides: Partial<Config> = {}): Promise<ReplicaSet> {
  const created = await createTestDatabase(inject("postgresAdminUrl"));
  const replicas: Replica[] = [];
  for (let i = 0; i < count; i++) {
    const database = await openDatabase({ databaseUrl: created.url, poolSize: 8, migrate: false });
    const server = await startServer(
      { ...defaults, host: "127.0.0.1", port: 0, shutdownGraceMs: 500, ...overrides },
      { logger: silentLogger, database },
    );
    replicas.push({ server, client: createClient(SessionService, createGrpcTransport({ baseUrl: server.url })) });
  }
  return {
    replicas,
    async close() {
      for (const r of replicas) {
        await r.server.close();
        await r.server.database.close();
      }
      await created.drop();
    },
  };
}
