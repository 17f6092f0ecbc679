import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { openDatabase } from "../../src/storage/database.js";

// graphile-worker's approach: migrate one template database once per run,
// then give every test file its own copy with CREATE DATABASE ... TEMPLATE,
// which is a file copy and takes milliseconds.
// One template per run, so that two runs on one server (a developer's and
// CI's, say) never drop each other's.
export function templateName(): string {
  return `sessionstore_template_${randomBytes(4).toString("hex")}`;
}

export function withDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function preparePostgresTemplate(adminUrl: string, template: string): Promise<void> {
  await admin(adminUrl, (client) => client.query(`CREATE DATABASE ${template}`));
  const opened = await openDatabase({ databaseUrl: withDatabase(adminUrl, template), poolSize: 2 });
  await opened.close();
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await admin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** A fresh database for one test file (migrated when copied from the run's template), and a way to drop it. */
export async function createTestDatabase(
  adminUrl: string,
  /** null: an empty database, not migrated. */
  template: string | null = inject("postgresTemplate"),
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sessionstore_test_${randomBytes(6).toString("hex")}`;
  await admin(adminUrl, (client) => client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`));
  return { url: withDatabase(adminUrl, name), drop: () => dropDatabase(adminUrl, name) };
}
