import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy that can swallow the server's answers and then cut every
 * connection. It stands between a real client and the real server to produce
 * the one fault a client cannot tell apart from a lost request: the server
 * did the work, and the answer never arrived.
 */
export class FaultProxy {
  private holding = false;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(upstreamPort: number): Promise<FaultProxy> {
    const server = createServer();
    const proxy = new FaultProxy(server);
    server.on("connection", (client) => proxy.accept(client, upstreamPort));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get target(): string {
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("proxy not listening");
    return `127.0.0.1:${address.port}`;
  }

  /** From now on, bytes from the server are dropped (requests still go through). */
  holdAnswers(): void {
    this.holding = true;
  }

  /** Resets every open connection and stops dropping; new connections work normally. */
  cut(): void {
    this.holding = false;
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, upstreamPort: number): void {
    const upstream = createConnection(upstreamPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (data) => upstream.write(data));
    upstream.on("data", (data) => {
      if (!this.holding) client.write(data);
    });
  }
}
