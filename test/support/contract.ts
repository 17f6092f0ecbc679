import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { Config } from "../../src/config/config.js";
import { backends, type TestBackend } from "./backends.js";
import { startTestServer, type TestServer } from "./server.js";

/**
 * Declares one block of the contract suite once per storage backend, each
 * with its own server and database. `server()` is valid inside tests.
 */
export function describeContract(
  title: string,
  body: (server: () => TestServer, backend: TestBackend) => void,
  config: Partial<Config> = {},
): void {
  for (const backend of backends()) {
    describe.skipIf(!backend.available)(`${title} [${backend.name}]`, () => {
      let running: TestServer | undefined;
      beforeAll(async () => {
        running = await startTestServer(backend, config);
      });
      afterAll(async () => {
        await running?.close();
      });
      body(() => {
        if (!running) throw new Error("server not started");
        return running;
      }, backend);
    });
  }
}

/** Awaits a call that must fail with `code`, and returns its error. */
export async function expectCode(call: Promise<unknown>, code: Code, message?: RegExp): Promise<ConnectError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected ${Code[code]}, but the call succeeded`).toBeInstanceOf(ConnectError);
  const ce = err as ConnectError;
  expect(Code[ce.code], ce.rawMessage).toBe(Code[code]);
  if (message) expect(ce.rawMessage).toMatch(message);
  return ce;
}
