// ADK's tables read as sessions, events (in ADK's JSON form of an event,
// whichever schema holds them) and app and user state.

import { create } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { unpickle } from "./pickle.js";
import { type Json, toJsonForm } from "./pydantic-json.js";
import { type AdkSchema, columnsOf, detectSchema, microsOf, microsSql, openReader, type Row, type SqlReader } from "./source.js";

export type JsonObject = { [key: string]: Json };

export interface AdkSession {
  appName: string;
  userId: string;
  id: string;
  /** Session-scope state (ADK keeps app and user state in their own tables). */
  state: JsonObject;
  createTime: Timestamp;
  updateTime: Timestamp;
}

export interface AdkEvent {
  id: string;
  /** The event as `Event.model_dump(mode="json", exclude_none=True)` gives it. */
  json: JsonObject;
  /** Set when the row's own timestamp is exact to the microsecond (v0). */
  timestamp?: Timestamp;
}

/** Where a session's event listing continues: after this (timestamp, id). */
export interface EventCursor {
  key: string;
  id: string;
}

function timestampOfMicros(us: bigint): Timestamp {
  const seconds = us >= 0n ? us / 1_000_000n : -((-us + 999_999n) / 1_000_000n);
  return create(TimestampSchema, { seconds, nanos: Number(us - seconds * 1_000_000n) * 1000 });
}

function jsonColumn(value: unknown, what: string): Json | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") {
    try {
      return JSON.parse(value) as Json;
    } catch {
      throw new Error(`${what} is not valid JSON`);
    }
  }
  if (value instanceof Uint8Array) return jsonColumn(new TextDecoder().decode(value), what);
  return value as Json;
}

function objectColumn(value: unknown, what: string): JsonObject {
  const v = jsonColumn(value, what) ?? {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error(`${what} is not a JSON object`);
  return v;
}

// v0 columns that hold a pydantic model's JSON, and those that hold a plain value.
const V0_JSON = [
  "content",
  "grounding_metadata",
  "custom_metadata",
  "usage_metadata",
  "citation_metadata",
  "input_transcription",
  "output_transcription",
];
const V0_TEXT = ["branch", "error_code", "error_message"];
const V0_FLAGS = ["partial", "turn_complete", "interrupted"];

export class AdkDatabase {
  private constructor(
    private readonly r: SqlReader,
    readonly schema: AdkSchema,
    private readonly eventColumns: Set<string>,
  ) {}

  static async open(url: string): Promise<AdkDatabase> {
    const r = await openReader(url);
    try {
      const schema = await detectSchema(r);
      return new AdkDatabase(r, schema, await columnsOf(r, "events"));
    } catch (e) {
      await r.close();
      throw e;
    }
  }

  get dialect(): SqlReader["dialect"] {
    return this.r.dialect;
  }

  close(): Promise<void> {
    return this.r.close();
  }

  async countEvents(app?: string): Promise<number> {
    const rows = await this.r.all(
      `SELECT count(*) AS n FROM events${app === undefined ? "" : " WHERE app_name = ?"}`,
      app === undefined ? [] : [app],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async countSessions(app?: string): Promise<number> {
    const rows = await this.r.all(
      `SELECT count(*) AS n FROM sessions${app === undefined ? "" : " WHERE app_name = ?"}`,
      app === undefined ? [] : [app],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** One page of sessions in key order, after `after` (app, user, id). */
  async sessions(limit: number, after?: [string, string, string], app?: string): Promise<AdkSession[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (app !== undefined) {
      where.push("app_name = ?");
      params.push(app);
    }
    if (after) {
      where.push("(app_name, user_id, id) > (?, ?, ?)");
      params.push(...after);
    }
    const rows = await this.r.all(
      `SELECT app_name, user_id, id, state, ${microsSql(this.r, "create_time")} AS create_us, ${microsSql(this.r, "update_time")} AS update_us
       FROM sessions ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY app_name, user_id, id LIMIT ?`,
      [...params, limit],
    );
    return rows.map((row) => ({
      appName: String(row.app_name),
      userId: String(row.user_id),
      id: String(row.id),
      state: objectColumn(row.state, `state of session ${row.id}`),
      createTime: timestampOfMicros(microsOf(row.create_us)),
      updateTime: timestampOfMicros(microsOf(row.update_us)),
    }));
  }

  /** One page of a session's events, oldest first (ADK's order: timestamp, then id). */
  async events(s: AdkSession, limit: number, after?: EventCursor): Promise<{ events: AdkEvent[]; next?: EventCursor }> {
    const key = this.r.dialect === "postgres" ? "extract(epoch from timestamp)" : "timestamp";
    const keyText = this.r.dialect === "postgres" ? `${key}::text` : key;
    const params: unknown[] = [s.appName, s.userId, s.id];
    let cursor = "";
    if (after) {
      cursor = this.r.dialect === "postgres" ? `AND (${key}, id) > (?::numeric, ?)` : "AND (timestamp, id) > (?, ?)";
      params.push(after.key, after.id);
    }
    const rows = await this.r.all(
      `SELECT *, ${microsSql(this.r, "timestamp")} AS ts_us, ${keyText} AS ts_key FROM events
       WHERE app_name = ? AND user_id = ? AND session_id = ? ${cursor}
       ORDER BY timestamp, id LIMIT ?`,
      [...params, limit],
    );
    const events = rows.map((row) => (this.schema === "1" ? this.v1Event(row) : this.v0Event(row)));
    const last = rows[rows.length - 1];
    return { events, next: rows.length === limit && last ? { key: String(last.ts_key), id: String(last.id) } : undefined };
  }

  private v1Event(row: Row): AdkEvent {
    const id = String(row.id);
    const data = objectColumn(row.event_data, `event_data of event ${id}`);
    // As ADK's StorageEvent.to_event: the columns win for id and invocation id;
    // the JSON's float timestamp wins over the column (which lost sub-microseconds).
    const json: JsonObject = { ...data, id, invocation_id: String(row.invocation_id ?? "") };
    if (typeof data.timestamp !== "number") {
      const exact = timestampOfMicros(microsOf(row.ts_us));
      json.timestamp = Number(microsOf(row.ts_us)) / 1e6;
      return { id, json, timestamp: exact };
    }
    return { id, json };
  }

  private v0Event(row: Row): AdkEvent {
    const id = String(row.id);
    const us = microsOf(row.ts_us);
    const json: JsonObject = {
      id,
      invocation_id: String(row.invocation_id ?? ""),
      author: String(row.author ?? ""),
      timestamp: Number(us) / 1e6,
    };
    const pickled = row.actions;
    if (pickled !== null && pickled !== undefined) {
      if (!(pickled instanceof Uint8Array)) throw new Error(`actions of event ${id} are not bytes`);
      let actions: Json;
      try {
        actions = toJsonForm(unpickle(pickled));
      } catch (e) {
        throw new Error(`actions of event ${id}: ${(e as Error).message}`);
      }
      if (typeof actions !== "object" || actions === null || Array.isArray(actions))
        throw new Error(`actions of event ${id} are not an object`);
      json.actions = actions;
    }
    // ADK's v0 reader turns a missing list into an empty set.
    const ids = jsonColumn(row.long_running_tool_ids_json, `long_running_tool_ids_json of event ${id}`);
    json.long_running_tool_ids = Array.isArray(ids) ? ids : [];
    for (const col of V0_TEXT) if (typeof row[col] === "string") json[col] = row[col] as string;
    for (const col of V0_FLAGS) {
      const v = row[col];
      if (v !== null && v !== undefined) json[col] = v === true || v === 1 || v === "1" || v === "t";
    }
    for (const col of V0_JSON) {
      if (!this.eventColumns.has(col)) continue;
      const v = jsonColumn(row[col], `${col} of event ${id}`);
      if (v !== undefined && v !== null) json[col] = v;
    }
    return { id, json, timestamp: timestampOfMicros(us) };
  }

  async appStates(app?: string): Promise<{ appName: string; state: JsonObject }[]> {
    const rows = await this.r.all(
      `SELECT app_name, state FROM app_states${app === undefined ? "" : " WHERE app_name = ?"} ORDER BY app_name`,
      app === undefined ? [] : [app],
    );
    return rows.map((row) => ({ appName: String(row.app_name), state: objectColumn(row.state, `state of app ${row.app_name}`) }));
  }

  async userStates(app?: string): Promise<{ appName: string; userId: string; state: JsonObject }[]> {
    const rows = await this.r.all(
      `SELECT app_name, user_id, state FROM user_states${app === undefined ? "" : " WHERE app_name = ?"} ORDER BY app_name, user_id`,
      app === undefined ? [] : [app],
    );
    return rows.map((row) => ({
      appName: String(row.app_name),
      userId: String(row.user_id),
      state: objectColumn(row.state, `state of user ${row.user_id}`),
    }));
  }
}
