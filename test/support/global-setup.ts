import type { TestProject } from "vitest/node";
import { dropDatabase, preparePostgresTemplate, templateName } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the test Postgres server, or "" when none is reachable. */
    postgresAdminUrl: string;
    /** The migrated database each test file's database is copied from. */
    postgresTemplate: string;
  }
}

// The Postgres half of the contract suite runs against a real server. CI sets
// SESSIONSTORE_REQUIRE_POSTGRES=1 so that a missing server fails the run
// instead of silently skipping half the suite.
export default async function setup(project: TestProject) {
  const url = process.env.SESSIONSTORE_TEST_DATABASE_URL ?? "postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres";
  const required = process.env.SESSIONSTORE_REQUIRE_POSTGRES === "1";
  const template = templateName();
  try {
    await preparePostgresTemplate(url, template);
    project.provide("postgresAdminUrl", url);
    project.provide("postgresTemplate", template);
    return async () => {
      await dropDatabase(url, template);
    };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (required) throw new Error(`SESSIONSTORE_REQUIRE_POSTGRES=1 but Postgres at ${url} is not usable: ${reason}`);
    process.stderr.write(
      `\n!! Postgres tests SKIPPED: ${url} is not usable (${reason}).\n!! Run scripts/postgres-up.sh or set SESSIONSTORE_TEST_DATABASE_URL.\n\n`,
    );
    project.provide("postgresAdminUrl", "");
    project.provide("postgresTemplate", "");
    return undefined;
  }
}
