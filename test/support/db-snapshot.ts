import { sql } from "kysely";
import type { OpenDatabase } from "../../src/storage/database.js";

/**
 * Everything the service stores, as one comparable value: "nothing changed"
 * means this is equal before and after.
 */
export async function snapshot(database: OpenDatabase): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    SELECT concat_ws('|',
      (SELECT coalesce(string_agg(concat_ws(',', app_name, user_id, id, state::text, revision, update_time_ns), ';' ORDER BY pk), '') FROM sessions),
      (SELECT coalesce(string_agg(concat_ws(',', session_pk, seq, encode(body, 'hex')), ';' ORDER BY session_pk, seq), '') FROM events),
      (SELECT coalesce(string_agg(concat_ws(',', app_name, user_id, state::text), ';' ORDER BY app_name, user_id), '') FROM user_states),
      (SELECT coalesce(string_agg(concat_ws(',', app_name, state::text), ';' ORDER BY app_name), '') FROM app_states),
      (SELECT coalesce(string_agg(concat_ws(',', app_name, user_id, id, create_time_ns, encode(content, 'hex'), custom_metadata::text), ';' ORDER BY pk), '') FROM memories),
      (SELECT coalesce(string_agg(concat_ws(',', pk, app_name, user_id, thread_id, update_time_ns), ';' ORDER BY pk), '') FROM checkpoint_threads),
      (SELECT coalesce(string_agg(concat_ws(',', thread_pk, checkpoint_ns, checkpoint_id, encode(body, 'hex'), metadata_json::text), ';' ORDER BY 1, 2, 3), '') FROM checkpoints),
      (SELECT coalesce(string_agg(concat_ws(',', thread_pk, checkpoint_ns, channel, version, encode(value, 'hex')), ';' ORDER BY 1, 2, 3, 4), '') FROM checkpoint_values),
      (SELECT coalesce(string_agg(concat_ws(',', thread_pk, checkpoint_id, task_id, idx, encode(value, 'hex')), ';' ORDER BY 1, 2, 3, 4), '') FROM checkpoint_writes)
    ) AS s`.execute(database.db);
  return rows[0]?.s ?? "";
}
