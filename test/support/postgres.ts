import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase } from "../../src/storage/database.js";

// graphile-worker's approach: migrate one template database once per run,
// then give every test file its own copy with CREATE DATABASE ... TEMPLATE,
// which is a file copy and takes milliseconds.
export const TEMPLATE_DB = "sessionstore_test_template";

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

export async function preparePostgresTemplate(adminUrl: string): Promise<void> {
  await admin(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  });
  const opened = await openDatabase({ databaseUrl: withDatabase(adminUrl, TEMPLATE_DB), poolSize: 2 });
  await opened.close();
}

/** A fresh, migrated database for one test file, and a way to drop it. */
export async function createTestDatabase(adminUrl: string, migrated = true): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sessionstore_test_${randomBytes(6).toString("hex")}`;
  await admin(adminUrl, (client) => client.query(`CREATE DATABASE ${name}${migrated ? ` TEMPLATE ${TEMPLATE_DB}` : ""}`));
  return {
    url: withDatabase(adminUrl, name),
    drop: () => admin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
