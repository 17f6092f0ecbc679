import { type Kysely, sql } from "kysely";

// Appends run as one statement, one round trip, in their own implicit
// transaction: a batch of appends (see storage/group-commit.ts) is one call
// of sessionstore_append. Before, an append was BEGIN, a locking read, a
// write and COMMIT, and under load the database spent most of its time idle
// in those transactions, waiting for the server's next statement.
//
// The server encodes each event without seq and, when the server assigns
// the time, without timestamp; both are known only here, under the lock, and
// are appended as protobuf fields (field order does not matter to readers).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION sessionstore_varint(v bigint) RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE STRICT AS $$
    DECLARE
      out bytea := ''::bytea;
    BEGIN
      -- A negative int64 is its 64-bit two's complement: the first shift is
      -- logical, after which the value is positive.
      IF v < 0 THEN
        out := set_byte('\\x00'::bytea, 0, ((v & 127) | 128)::int);
        v := (v >> 7) & 144115188075855871;
      END IF;
      LOOP
        IF v < 128 THEN
          RETURN out || set_byte('\\x00'::bytea, 0, v::int);
        END IF;
        out := out || set_byte('\\x00'::bytea, 0, ((v & 127) | 128)::int);
        v := v >> 7;
      END LOOP;
    END $$`.execute(db);

  // Event.seq is field 2 (varint); Event.timestamp is field 6, a Timestamp
  // (seconds field 1, nanos field 2; zero values are left out, as proto3 does).
  await sql`
    CREATE FUNCTION sessionstore_event_fields(seq bigint, timestamp_ns bigint) RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE
      ts bytea := ''::bytea;
      seconds bigint;
      nanos bigint;
    BEGIN
      IF timestamp_ns IS NOT NULL THEN
        -- Timestamp nanos are never negative: floor, without overflow at 1677.
        seconds := timestamp_ns / 1000000000;
        nanos := timestamp_ns % 1000000000;
        IF nanos < 0 THEN
          seconds := seconds - 1;
          nanos := nanos + 1000000000;
        END IF;
        IF seconds <> 0 THEN ts := ts || '\\x08'::bytea || sessionstore_varint(seconds); END IF;
        IF nanos <> 0 THEN ts := ts || '\\x10'::bytea || sessionstore_varint(nanos); END IF;
        ts := '\\x32'::bytea || sessionstore_varint(octet_length(ts)) || ts;
      END IF;
      RETURN '\\x10'::bytea || sessionstore_varint(seq) || ts;
    END $$`.execute(db);

  // One row per append, in input order. Outcomes: ok, duplicate (the stored
  // copy of the same event id), not_found, stale, too_many_events,
  // event_too_big. A state over its size limit raises SQLSTATE SS001 (detail:
  // "<append index> <scope> <bytes>"), which rolls back the whole call.
  //
  // Every session's advisory lock is taken first, in primary-key order (two
  // calls cannot deadlock), before any row lock: waiting for an advisory lock
  // assigns no transaction id, locking a row does. So a call gets its
  // transaction id only once every earlier append to its sessions has
  // committed, and transaction-id order is seq order in every session: what
  // live tails across sessions rely on. Each statement below then reads the
  // latest committed rows (READ COMMITTED takes a snapshot per statement).
  // Appends to one session in one call run in input order, each seeing the
  // one before. User and app states are written last, in key order; a call
  // holds at most one append per user or app scope with a delta.
  await sql`
    CREATE FUNCTION sessionstore_append(
      p_app text[], p_user text[], p_session text[], p_event_id text[], p_expected bigint[],
      p_body bytea[], p_timestamp bigint[], p_now bigint, p_cutoff bigint[],
      p_session_delta jsonb[], p_user_delta jsonb[], p_app_delta jsonb[],
      p_max_events bigint[], p_max_event_bytes int[], p_max_state_bytes int[]
    ) RETURNS TABLE (
      o_outcome text, o_seq bigint, o_timestamp_ns bigint, o_revision bigint, o_update_time_ns bigint,
      o_existing bytea, o_event_bytes int, o_state_bytes int, o_user_bytes int, o_app_bytes int
    )
    LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    DECLARE
      n int;
      s record;
      found_body bytea;
      next_seq bigint;
      v_ts bigint;
      v_upd bigint;
      v_body bytea;
      v_bytes int;
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
      w record;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('sessionstore.session.' || o.pk, 0))
      FROM (
        SELECT sessions.pk FROM unnest(p_app, p_user, p_session) AS k (a, u, i)
        JOIN sessions ON sessions.app_name = k.a AND sessions.user_id = k.u AND sessions.id = k.i
        ORDER BY sessions.pk
      ) AS o;

      FOR n IN 1 .. coalesce(array_length(p_app, 1), 0) LOOP
        outcomes[n] := NULL;
        SELECT pk, revision, update_time_ns INTO s FROM sessions
        WHERE app_name = p_app[n] AND user_id = p_user[n] AND id = p_session[n]
          AND (p_cutoff[n] IS NULL OR update_time_ns >= p_cutoff[n])
        FOR UPDATE;
        IF NOT FOUND THEN
          outcomes[n] := 'not_found';
          CONTINUE;
        END IF;
        revisions[n] := s.revision;
        updates[n] := s.update_time_ns;
        SELECT events.body INTO found_body FROM events WHERE session_pk = s.pk AND event_id = p_event_id[n];
        IF FOUND THEN
          outcomes[n] := 'duplicate';
          existing[n] := found_body;
          CONTINUE;
        END IF;
        IF p_expected[n] IS NOT NULL AND p_expected[n] <> s.revision THEN
          outcomes[n] := 'stale';
          CONTINUE;
        END IF;
        next_seq := s.revision + 1;
        seqs[n] := next_seq;
        IF next_seq > p_max_events[n] THEN
          outcomes[n] := 'too_many_events';
          CONTINUE;
        END IF;
        -- A server time never goes before the session's last update.
        v_ts := coalesce(p_timestamp[n], greatest(p_now, s.update_time_ns));
        v_body := p_body[n] || sessionstore_event_fields(next_seq, CASE WHEN p_timestamp[n] IS NULL THEN v_ts END);
        event_sizes[n] := octet_length(v_body);
        IF octet_length(v_body) > p_max_event_bytes[n] THEN
          outcomes[n] := 'event_too_big';
          CONTINUE;
        END IF;
        v_upd := greatest(v_ts, s.update_time_ns);
        UPDATE sessions
           SET revision = next_seq,
               update_time_ns = v_upd,
               state = CASE WHEN p_session_delta[n] IS NULL THEN state ELSE state || p_session_delta[n] END
         WHERE pk = s.pk
        RETURNING CASE WHEN p_session_delta[n] IS NULL THEN 0 ELSE octet_length(state::text) END INTO v_bytes;
        IF v_bytes > p_max_state_bytes[n] THEN
          RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = n || ' session ' || v_bytes;
        END IF;
        state_sizes[n] := v_bytes;
        INSERT INTO events (session_pk, seq, event_id, timestamp_ns, body, app_name, user_id)
        VALUES (s.pk, next_seq, p_event_id[n], v_ts, v_body, p_app[n], p_user[n]);
        outcomes[n] := 'ok';
        stamps[n] := v_ts;
        revisions[n] := next_seq;
        updates[n] := v_upd;
      END LOOP;

      -- ADK's delta rules: || replaces whole top-level values and keeps JSON null.
      FOR w IN
        SELECT k.n::int AS n, k.a, k.u, k.d FROM unnest(p_app, p_user, p_user_delta, outcomes) WITH ORDINALITY AS k (a, u, d, outcome, n)
        WHERE k.d IS NOT NULL AND k.outcome = 'ok' ORDER BY k.a, k.u
      LOOP
        INSERT INTO user_states (app_name, user_id, state, update_time_ns) VALUES (w.a, w.u, w.d, updates[w.n])
        ON CONFLICT (app_name, user_id) DO UPDATE SET state = user_states.state || excluded.state, update_time_ns = excluded.update_time_ns
        RETURNING octet_length(state::text) INTO v_bytes;
        IF v_bytes > p_max_state_bytes[w.n] THEN
          RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = w.n || ' user ' || v_bytes;
        END IF;
        user_sizes[w.n] := v_bytes;
      END LOOP;
      FOR w IN
        SELECT k.n::int AS n, k.a, k.d FROM unnest(p_app, p_app_delta, outcomes) WITH ORDINALITY AS k (a, d, outcome, n)
        WHERE k.d IS NOT NULL AND k.outcome = 'ok' ORDER BY k.a
      LOOP
        INSERT INTO app_states (app_name, state, update_time_ns) VALUES (w.a, w.d, updates[w.n])
        ON CONFLICT (app_name) DO UPDATE SET state = app_states.state || excluded.state, update_time_ns = excluded.update_time_ns
        RETURNING octet_length(state::text) INTO v_bytes;
        IF v_bytes > p_max_state_bytes[w.n] THEN
          RAISE EXCEPTION 'sessionstore: state over its size limit' USING ERRCODE = 'SS001', DETAIL = w.n || ' app ' || v_bytes;
        END IF;
        app_sizes[w.n] := v_bytes;
      END LOOP;

      FOR n IN 1 .. coalesce(array_length(p_app, 1), 0) LOOP
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
  await sql`DROP FUNCTION sessionstore_append, sessionstore_event_fields, sessionstore_varint`.execute(db);
}
