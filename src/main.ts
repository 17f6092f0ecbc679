#!/usr/bin/env node
import { ConfigError, loadConfig, usage } from "./config/config.js";
import { createLogger } from "./log/logger.js";
import { startServer } from "./server/server.js";
import { tracingConfigured } from "./tracing/tracing.js";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // Help that was asked for is output, not an error: stdout and exit 0, so
  // `sessionstore --help | less` and `&&` chains work.
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env, argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  // The SDK is loaded only when traces are asked for: otherwise the API's
  // no-op tracer stays, and nothing on the hot path records anything.
  const tracing = tracingConfigured(process.env) ? (await import("./tracing/sdk.js")).startTracing(logger) : undefined;
  const server = await startServer(config, { logger });
  // The one line meant for a person (logs are JSON on stderr): where to click.
  process.stdout.write(`Sessionstore web console: ${server.url}/\n`);
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      logger.warn("second signal, exiting now", { signal });
      process.exit(1);
    }
    logger.info("signal received", { signal });
    server
      .close()
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error("shutdown failed", { err });
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sessionstore failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
