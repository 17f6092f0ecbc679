import type { ColumnType, Generated } from "kysely";

// Times are integer nanoseconds since the Unix epoch: timestamptz keeps only
// microseconds, which would break the exact round trip of a Python float.
// int8 columns come back as bigint on both drivers (see database.ts).

export interface SessionsTable {
  pk: Generated<bigint>;
  app_name: string;
  user_id: string;
  id: string;
  state: ColumnType<JsonRecord, string, string>;
  revision: ColumnType<bigint, bigint | undefined, bigint>;
  create_time_ns: ColumnType<bigint, bigint, never>;
  update_time_ns: bigint;
  /** The create-time state, prefixed keys as given; null for sessions created before migration 0005. */
  initial_state: ColumnType<JsonRecord | null, string | undefined, never>;
  /** Set on a session made by ForkSession (migration 0008). */
  forked_from_id: ColumnType<string | null, string | undefined, never>;
  forked_at_seq: ColumnType<bigint | null, bigint | undefined, never>;
}

export interface EventsTable {
  session_pk: bigint;
  seq: bigint;
  event_id: string;
  timestamp_ns: bigint;
  /** The whole `sessionstore.v1.Event`, protobuf binary, as returned to readers. */
  body: Uint8Array;
  /** Global position, for ordering within one transaction. */
  pos: Generated<bigint>;
  /** The writing transaction (xid8), as text. */
  tx: Generated<string>;
  app_name: string;
  user_id: string;
}

export interface AppStatesTable {
  app_name: string;
  state: ColumnType<JsonRecord, string, string>;
  update_time_ns: bigint;
}

export interface UserStatesTable {
  app_name: string;
  user_id: string;
  state: ColumnType<JsonRecord, string, string>;
  update_time_ns: bigint;
}

export interface Database {
  sessions: SessionsTable;
  events: EventsTable;
  app_states: AppStatesTable;
  user_states: UserStatesTable;
}

export type JsonRecord = { [key: string]: unknown };
