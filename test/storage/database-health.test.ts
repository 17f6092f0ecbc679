import { createServer, type Server, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseHealth } from "../../src/storage/database-health.js";
import { waitFor } from "../support/wait.js";

/** Blocks the event loop, as a burst of work on the server's one thread does. */
function stall(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {}
}

describe("DatabaseHealth probes", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A probe that needs I/O, as a real one does: connecting to a listening socket. */
  const connectProbe = () =>
    new Promise<void>((resolve, reject) => {
      const socket = new Socket();
      socket.once("error", reject);
      socket.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve();
      });
    });

  it("does not take the server's own stalled event loop for an unreachable database", async () => {
    let settled = false;
    const health = new DatabaseHealth(async () => {
      try {
        await connectProbe();
      } finally {
        settled = true;
      }
    });
    const changes: boolean[] = [];
    health.onChange((reachable) => changes.push(reachable));
    health.suspect();
    // Longer than the probe's 2 s limit: its timer is due before the socket is read.
    stall(2600);
    await waitFor("the probe to settle", () => settled, 10_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(health.probes).toBe(1);
    expect(changes).toEqual([]);
    expect(health.reachable).toBe(true);
    health.close();
  });

  it("still gives up on a probe that gets no answer", async () => {
    const health = new DatabaseHealth(() => new Promise<void>(() => {}));
    health.suspect();
    await waitFor("the database to be reported unreachable", () => !health.reachable, 10_000);
    health.close();
  });
});
