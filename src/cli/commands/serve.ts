import { loadConfig, serverOptions, usage } from "../../config/config.js";
import { createLogger } from "../../log/logger.js";
import { startServer } from "../../server/server.js";
import { tracingConfigured } from "../../tracing/tracing.js";
import type { Command } from "../command.js";

export const serve: Command = {
  name: "serve",
  summary: "run the server (gRPC, gRPC-Web, Connect and the web console on one port)",
  options: serverOptions,
  async run(argv, io) {
    // Help that was asked for is output, not an error: stdout and exit 0.
    if (argv.includes("--help") || argv.includes("-h")) {
      io.stdout.write(usage());
      return 0;
    }
    const config = loadConfig(io.env, argv);
    const logger = createLogger(config.logLevel);
    // The SDK is loaded only when traces are asked for: otherwise the API's
    // no-op tracer stays, and nothing on the hot path records anything.
    const tracing = tracingConfigured(io.env) ? (await import("../../tracing/sdk.js")).startTracing(logger) : undefined;
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer(config, { logger });
    } catch (err) {
      io.stderr.write(`sessionstore failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      return 1;
    }
    // The one line meant for a person (logs are JSON on stderr): where to click.
    io.stdout.write(`Sessionstore web console: ${server.url}/\n`);
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      io.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    logger.info("signal received", { signal: String(io.signal.reason ?? "abort") });
    try {
      await server.close();
      // Spans still buffered go out before the process ends.
      await tracing?.shutdown();
      return 0;
    } catch (err) {
      logger.error("shutdown failed", { err });
      return 1;
    }
  },
};
