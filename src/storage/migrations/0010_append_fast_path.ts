import { type Kysely, sql } from "kysely";
import * as m0004 from "./0004_append_function.js";

// sessionstore_append again (migration 0004), with the same arguments,
// outcomes and locking, made cheaper for PostgreSQL to run:
//
// - Its statements are planned once per connection (a generic plan). Under
//   plan_cache_mode = auto PostgreSQL kept planning them again on every call
//   (their arrays look different each time), which cost about a third of
//   the function's time.
// - A call with one append (every call when one writer appends at a time)
//   takes a path of its own: the session's primary key, its advisory lock
//   as an expression, the locking read, and the session's update and the
//   event's insert in one statement. The general path below, for batches,
//   is 0004's unchanged.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION sessionstore_append(
      p_app text[], p_user text[], p_session text[], p_event_id text[], p_expected bigint[],
      p_body bytea[], p_timestamp bigint[], p_now bigint, p_cutoff bigint[],
      p_session_delta jsonb[], p_user_delta jsonb[], p_app_delta jsonb[],
      p_max_events bigint[], p_max_event_bytes int[], p_max_state_bytes int[]
    ) RETURNS TABLE (
      o_outcome text, o_seq bigint, o_timestamp_ns bigint, o_revision bigint, o_update_time_ns bigint,
      o_existing bytea, o_event_bytes int, o_state_bytes int, o_user_bytes int, o_app_bytes int
    )
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    AS $$
    #variable_conflict use_column
    DECLARE
      total int := coalesce(array_length(p_app, 1), 0);
      one_by_one boolean;
      n int;
      r record;
      -- The session of each append as read (set-based) or as it is now (one by one).
      s_pk bigint;
      s_revision bigint;
      s_update bigint;
      s_found bytea;
      l_pk bigint[] := '{}';
      l_revision bigint[] := '{}';
      l_update bigint[] := '{}';
      l_found bytea[] := '{}';
      next_seq bigint;
      v_ts bigint;
      v_upd bigint;
      v_body bytea;
      v_bytes int;
      v_lock text;
      -- Writes of the set-based path.
      w_n int[] := '{}';
      w_pk bigint[] := '{}';
      w_seq bigint[] := '{}';
      w_ts bigint[] := '{}';
      w_upd bigint[] := '{}';
      w_body bytea[] := '{}';
      w_delta jsonb[] := '{}';
      w_event_id text[] := '{}';
      w_app text[] := '{}';
      w_user text[] := '{}';
      outcomes text[] := '{}';
      seqs bigint[] := '{}';
      stamps bigint[] := '{}';
      revisions bigint[] := '{}';
      updates bigint[] := '{}';
      existing bytea[] := '{}';
      event_sizes int[] := '{}';
      state_sizes int[] := '{}';
      user_sizes int[] := '{}';
      app_sizes int[] := '{}';
    BEGIN
      IF total = 1 THEN
        -- One append: the same steps as below, one row each, in four
        -- statements (the usual call with a single writer).
        SELECT pk INTO s_pk FROM sessions WHERE app_name = p_app[1] AND user_id = p_user[1] AND id = p_session[1];
        IF s_pk IS NOT NULL THEN
          -- An expression, not a statement: no plan, no executor.
          v_lock := pg_advisory_xact_lock(hashtextextended('sessionstore.session.' || s_pk, 0))::text;
          SELECT s.revision, s.update_time_ns, (SELECT e.body FROM events e WHERE e.session_pk = s.pk AND e.event_id = p_event_id[1])
            INTO s_revision, s_update, s_found
          FROM sessions s
          WHERE s.pk = s_pk AND (p_cutoff[1] IS NULL OR s.update_time_ns >= p_cutoff[1])
          FOR UPDATE OF s;
          IF NOT FOUND THEN
            s_pk := NULL;
          END IF;
        END IF;
        o_outcome := NULL;
        o_seq := NULL;
        o_timestamp_ns := NULL;
        o_revision := s_revision;
        o_update_time_ns := s_update;
        o_existing := NULL;
        o_event_bytes := NULL;
        o_state_bytes := NULL;
        o_user_bytes := NULL;
        o_app_bytes := NULL;
        IF s_pk IS NULL THEN
          o_outcome := 'not_found';
          o_revision := NULL;
          o_update_time_ns := NULL;
        ELSIF s_found IS NOT NULL THEN
          o_outcome := 'duplicate';
          o_existing := s_found;
        ELSIF p_expected[1] IS NOT NULL AND p_expected[1] <> s_revision THEN
          o_outcome := 'stale';
        ELSE
          next_seq := s_revision + 1;
          o_seq := next_seq;
          IF next_seq > p_max_events[1] THEN
            o_outcome := 'too_many_events';
          ELSE
            v_ts := coalesce(p_timestamp[1], greatest(p_now, s_update));
            v_body := p_body[1] || sessionstore_event_fields(next_seq, CASE WHEN p_timestamp[1] IS NULL THEN v_ts END);
            o_event_bytes := octet_length(v_body);
            IF o_event_bytes > p_max_event_bytes[1] THEN
              o_outcome := 'event_too_big';
            ELSE
              v_upd := greatest(v_ts, s_update);
              -- The session and its event in one statement.
              WITH u AS (
                UPDATE sessions
                   SET revision = next_seq,
                       update_time_ns = v_upd,
                       state = CASE WHEN p_session_delta[1] IS NULL THEN state ELSE state || p_session_delta[1] END
                 WHERE pk = s_pk
                RETURNING CASE WHEN p_session_delta[1] IS NULL THEN 0 ELSE octet_length(state::text) END AS bytes
              ), i AS (
                INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
                VALUES (s_pk, next_seq, p_event_id[1], v_ts, v_body, p_app[1], p_user[1])
              )
              SELECT u.bytes INTO v_bytes FROM u;
              IF v_bytes > p_max_state_bytes[1] THEN
                RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = '1 session ' || v_bytes;
              END IF;
              o_state_bytes := v_bytes;
              IF p_user_delta[1] IS NOT NULL THEN
                INSERT INTO user_states (app_name, user_id, state, update_time_ns) VALUES (p_app[1], p_user[1], p_user_delta[1], v_upd)
                ON CONFLICT (app_name, user_id) DO UPDATE SET state = user_states.state || excluded.state, update_time_ns = excluded.update_time_ns
                RETURNING octet_length(state::text) INTO v_bytes;
                IF v_bytes > p_max_state_bytes[1] THEN
                  RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = '1 user ' || v_bytes;
                END IF;
                o_user_bytes := v_bytes;
              END IF;
              IF p_app_delta[1] IS NOT NULL THEN
                INSERT INTO app_states (app_name, state, update_time_ns) VALUES (p_app[1], p_app_delta[1], v_upd)
                ON CONFLICT (app_name) DO UPDATE SET state = app_states.state || excluded.state, update_time_ns = excluded.update_time_ns
                RETURNING octet_length(state::text) INTO v_bytes;
                IF v_bytes > p_max_state_bytes[1] THEN
                  RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = '1 app ' || v_bytes;
                END IF;
                o_app_bytes := v_bytes;
              END IF;
              o_outcome := 'ok';
              o_timestamp_ns := v_ts;
              o_revision := next_seq;
              o_update_time_ns := v_upd;
            END IF;
          END IF;
        END IF;
        RETURN NEXT;
        RETURN;
      END IF;

      PERFORM pg_advisory_xact_lock(hashtextextended('sessionstore.session.' || o.pk, 0))
      FROM (
        SELECT sessions.pk FROM unnest(p_app, p_user, p_session) AS k (a, u, i)
        JOIN sessions ON sessions.app_name = k.a AND sessions.user_id = k.u AND sessions.id = k.i
        ORDER BY sessions.pk
      ) AS o;

      SELECT count(DISTINCT (k.a, k.u, k.i)) < total INTO one_by_one FROM unnest(p_app, p_user, p_session) AS k (a, u, i);
      IF NOT one_by_one THEN
        FOR r IN
          SELECT k.n::int AS n, s.pk, s.revision, s.update_time_ns,
                 (SELECT e.body FROM events e WHERE e.session_pk = s.pk AND e.event_id = k.event_id) AS found
          FROM unnest(p_app, p_user, p_session, p_event_id, p_cutoff) WITH ORDINALITY AS k (a, u, i, event_id, cutoff, n)
          JOIN sessions s ON s.app_name = k.a AND s.user_id = k.u AND s.id = k.i
          WHERE k.cutoff IS NULL OR s.update_time_ns >= k.cutoff
          FOR UPDATE OF s
        LOOP
          l_pk[r.n] := r.pk;
          l_revision[r.n] := r.revision;
          l_update[r.n] := r.update_time_ns;
          l_found[r.n] := r.found;
        END LOOP;
      END IF;

      FOR n IN 1 .. total LOOP
        outcomes[n] := NULL;
        IF one_by_one THEN
          SELECT pk, revision, update_time_ns INTO s_pk, s_revision, s_update FROM sessions
          WHERE app_name = p_app[n] AND user_id = p_user[n] AND id = p_session[n]
            AND (p_cutoff[n] IS NULL OR update_time_ns >= p_cutoff[n])
          FOR UPDATE;
          IF FOUND THEN
            SELECT events.body INTO s_found FROM events WHERE session_pk = s_pk AND event_id = p_event_id[n];
          END IF;
        ELSE
          s_pk := l_pk[n];
          s_revision := l_revision[n];
          s_update := l_update[n];
          s_found := l_found[n];
        END IF;
        IF s_pk IS NULL THEN
          outcomes[n] := 'not_found';
          CONTINUE;
        END IF;
        revisions[n] := s_revision;
        updates[n] := s_update;
        IF s_found IS NOT NULL THEN
          outcomes[n] := 'duplicate';
          existing[n] := s_found;
          CONTINUE;
        END IF;
        IF p_expected[n] IS NOT NULL AND p_expected[n] <> s_revision THEN
          outcomes[n] := 'stale';
          CONTINUE;
        END IF;
        next_seq := s_revision + 1;
        seqs[n] := next_seq;
        IF next_seq > p_max_events[n] THEN
          outcomes[n] := 'too_many_events';
          CONTINUE;
        END IF;
        -- A server time never goes before the session's last update.
        v_ts := coalesce(p_timestamp[n], greatest(p_now, s_update));
        v_body := p_body[n] || sessionstore_event_fields(next_seq, CASE WHEN p_timestamp[n] IS NULL THEN v_ts END);
        event_sizes[n] := octet_length(v_body);
        IF octet_length(v_body) > p_max_event_bytes[n] THEN
          outcomes[n] := 'event_too_big';
          CONTINUE;
        END IF;
        v_upd := greatest(v_ts, s_update);
        outcomes[n] := 'ok';
        stamps[n] := v_ts;
        revisions[n] := next_seq;
        updates[n] := v_upd;
        IF one_by_one THEN
          UPDATE sessions
             SET revision = next_seq,
                 update_time_ns = v_upd,
                 state = CASE WHEN p_session_delta[n] IS NULL THEN state ELSE state || p_session_delta[n] END
           WHERE pk = s_pk
          RETURNING CASE WHEN p_session_delta[n] IS NULL THEN 0 ELSE octet_length(state::text) END INTO v_bytes;
          IF v_bytes > p_max_state_bytes[n] THEN
            RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = n || ' session ' || v_bytes;
          END IF;
          state_sizes[n] := v_bytes;
          INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
          VALUES (s_pk, next_seq, p_event_id[n], v_ts, v_body, p_app[n], p_user[n]);
        ELSE
          w_n := array_append(w_n, n);
          w_pk := array_append(w_pk, s_pk);
          w_seq := array_append(w_seq, next_seq);
          w_ts := array_append(w_ts, v_ts);
          w_upd := array_append(w_upd, v_upd);
          w_body := array_append(w_body, v_body);
          w_delta := array_append(w_delta, p_session_delta[n]);
          w_event_id := array_append(w_event_id, p_event_id[n]);
          w_app := array_append(w_app, p_app[n]);
          w_user := array_append(w_user, p_user[n]);
        END IF;
      END LOOP;

      IF coalesce(array_length(w_n, 1), 0) > 0 THEN
        FOR r IN
          UPDATE sessions s
             SET revision = w.seq,
                 update_time_ns = w.upd,
                 state = CASE WHEN w.delta IS NULL THEN s.state ELSE s.state || w.delta END
            FROM unnest(w_n, w_pk, w_seq, w_upd, w_delta) AS w (n, pk, seq, upd, delta)
           WHERE s.pk = w.pk
          RETURNING w.n, CASE WHEN w.delta IS NULL THEN 0 ELSE octet_length(s.state::text) END AS bytes
        LOOP
          IF r.bytes > p_max_state_bytes[r.n] THEN
            RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = r.n || ' session ' || r.bytes;
          END IF;
          state_sizes[r.n] := r.bytes;
        END LOOP;
        INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
        SELECT w.pk, w.seq, w.event_id, w.ts, w.body, w.a, w.u
        FROM unnest(w_pk, w_seq, w_event_id, w_ts, w_body, w_app, w_user) AS w (pk, seq, event_id, ts, body, a, u);
      END IF;

      -- ADK's delta rules: || replaces whole top-level values and keeps JSON null.
      FOR r IN
        SELECT k.n::int AS n, k.a, k.u, k.d FROM unnest(p_app, p_user, p_user_delta, outcomes) WITH ORDINALITY AS k (a, u, d, outcome, n)
        WHERE k.d IS NOT NULL AND k.outcome = 'ok' ORDER BY k.a, k.u
      LOOP
        INSERT INTO user_states (app_name, user_id, state, update_time_ns) VALUES (r.a, r.u, r.d, updates[r.n])
        ON CONFLICT (app_name, user_id) DO UPDATE SET state = user_states.state || excluded.state, update_time_ns = excluded.update_time_ns
        RETURNING octet_length(state::text) INTO v_bytes;
        IF v_bytes > p_max_state_bytes[r.n] THEN
          RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = r.n || ' user ' || v_bytes;
        END IF;
        user_sizes[r.n] := v_bytes;
      END LOOP;
      FOR r IN
        SELECT k.n::int AS n, k.a, k.d FROM unnest(p_app, p_app_delta, outcomes) WITH ORDINALITY AS k (a, d, outcome, n)
        WHERE k.d IS NOT NULL AND k.outcome = 'ok' ORDER BY k.a
      LOOP
        INSERT INTO app_states (app_name, state, update_time_ns) VALUES (r.a, r.d, updates[r.n])
        ON CONFLICT (app_name) DO UPDATE SET state = app_states.state || excluded.state, update_time_ns = excluded.update_time_ns
        RETURNING octet_length(state::text) INTO v_bytes;
        IF v_bytes > p_max_state_bytes[r.n] THEN
          RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = r.n || ' app ' || v_bytes;
        END IF;
        app_sizes[r.n] := v_bytes;
      END LOOP;

      FOR n IN 1 .. total LOOP
        o_outcome := outcomes[n];
        o_seq := seqs[n];
        o_timestamp_ns := stamps[n];
        o_revision := revisions[n];
        o_update_time_ns := updates[n];
        o_existing := existing[n];
        o_event_bytes := event_sizes[n];
        o_state_bytes := state_sizes[n];
        o_user_bytes := user_sizes[n];
        o_app_bytes := app_sizes[n];
        RETURN NEXT;
      END LOOP;
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // 0004's functions as they were.
  await m0004.down(db);
  await m0004.up(db);
}
