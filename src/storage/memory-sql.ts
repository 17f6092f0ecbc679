import type { JsonObject } from "@bufbuild/protobuf";
import { type RawBuilder, sql } from "kysely";

// SQL shared by MemoryService's reads: the columns every read selects, the
// user's live entries, and the request's filter.

export interface MemoryScope {
  appName: string;
  userId: string;
}

export interface MemoryFilterQuery {
  authors?: string[] | undefined;
  /** Inclusive. */
  startNs?: bigint | undefined;
  /** Exclusive. */
  endNs?: bigint | undefined;
  /** Containment: every key equal. */
  metadata?: JsonObject | undefined;
  sessionIds?: string[] | undefined;
  namespacePrefix?: string | undefined;
}

/** Row shape every read selects (see MEMORY_COLUMNS). */
export interface MemoryRow {
  pk: bigint;
  app_name: string;
  user_id: string;
  id: string;
  namespace: string;
  author: string;
  timestamp_ns: bigint;
  create_time_ns: bigint;
  expire_time_ns: bigint | null;
  session_id: string;
  event_id: string;
  content: Uint8Array;
  custom_metadata: unknown;
  has_embedding: boolean;
}

export const MEMORY_COLUMNS = sql.raw(
  "m.pk, m.app_name, m.user_id, m.id, m.namespace, m.author, m.timestamp_ns, m.create_time_ns, m.expire_time_ns, m.session_id, m.event_id, m.content, m.custom_metadata, m.embedding IS NOT NULL AS has_embedding",
);

/** The user's entries that have not expired. */
export function liveScope(scope: MemoryScope, liveSince: bigint | undefined, now: bigint): RawBuilder<unknown> {
  return sql`m.app_name = ${scope.appName} AND m.user_id = ${scope.userId}
    AND (m.expire_time_ns IS NULL OR m.expire_time_ns > ${now})
    ${liveSince === undefined ? sql`` : sql`AND m.create_time_ns >= ${liveSince}`}`;
}

export function filterSql(f: MemoryFilterQuery): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`true`];
  if (f.authors && f.authors.length > 0) parts.push(sql`m.author = ANY(${f.authors}::text[])`);
  if (f.startNs !== undefined) parts.push(sql`m.timestamp_ns >= ${f.startNs}`);
  if (f.endNs !== undefined) parts.push(sql`m.timestamp_ns < ${f.endNs}`);
  if (f.metadata && Object.keys(f.metadata).length > 0) parts.push(sql`m.custom_metadata @> ${JSON.stringify(f.metadata)}::jsonb`);
  if (f.sessionIds && f.sessionIds.length > 0) parts.push(sql`m.session_id = ANY(${f.sessionIds}::text[])`);
  if (f.namespacePrefix) parts.push(sql`starts_with(m.namespace, ${f.namespacePrefix})`);
  return sql.join(parts, sql` AND `);
}
