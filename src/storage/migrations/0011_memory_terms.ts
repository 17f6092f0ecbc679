import { type Kysely, sql } from "kysely";

// How many of a user's memories hold each word, kept on write, so that a
// search weighs its words (memory-terms.ts) with one index lookup per word
// instead of counting the user's entries through the GIN index: at 1,000
// entries per user that counting read ~100 index pages and up to 200 rows
// per common word and was half of a search's time. The row with lexeme ''
// counts the user's entries (no lexeme is empty).
//
// Statement triggers with transition tables keep the counts, so every
// writer (the store, the sweeper, bulk loads, tests' SQL) keeps them right
// and a 50,000-row INSERT pays one aggregated upsert, not one per row. The
// upserts run in key order, so two transactions touching the same counts
// wait for each other instead of deadlocking. An UPDATE removes the old
// words and adds the new ones (two triggers, in name order). Like the old
// counting, entries expired but not yet swept are counted.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Writers wait until the migration commits, so no entry is counted twice
  // or missed by the counting of the entries already stored (at the end).
  await sql`LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  await sql`
    CREATE TABLE memory_terms (
      app_name  text   NOT NULL,
      user_id   text   NOT NULL,
      lexeme    text   NOT NULL,
      entries   bigint NOT NULL,
      PRIMARY KEY (app_name, user_id, lexeme)
    )`.execute(db);
  await sql`
    CREATE FUNCTION memory_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO memory_terms AS t (app_name, user_id, lexeme, entries)
      SELECT a.app_name, a.user_id, l.lexeme, count(*)
      FROM memory_terms_new a, unnest(array_prepend('', tsvector_to_array(a.search))) AS l(lexeme)
      GROUP BY 1, 2, 3
      ORDER BY 1, 2, 3
      ON CONFLICT (app_name, user_id, lexeme) DO UPDATE SET entries = t.entries + excluded.entries;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION memory_terms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO memory_terms AS t (app_name, user_id, lexeme, entries)
      SELECT r.app_name, r.user_id, l.lexeme, -count(*)
      FROM memory_terms_old r, unnest(array_prepend('', tsvector_to_array(r.search))) AS l(lexeme)
      GROUP BY 1, 2, 3
      ORDER BY 1, 2, 3
      ON CONFLICT (app_name, user_id, lexeme) DO UPDATE SET entries = t.entries + excluded.entries;
      -- A word no entry holds any more: no row, so the table stays the size of the vocabulary in use.
      DELETE FROM memory_terms t
      USING (SELECT DISTINCT r.app_name, r.user_id, l.lexeme
             FROM memory_terms_old r, unnest(array_prepend('', tsvector_to_array(r.search))) AS l(lexeme)) g
      WHERE t.app_name = g.app_name AND t.user_id = g.user_id AND t.lexeme = g.lexeme AND t.entries <= 0;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER memory_terms_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS memory_terms_new FOR EACH STATEMENT EXECUTE FUNCTION memory_terms_added()`.execute(db);
  await sql`
    CREATE TRIGGER memory_terms_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS memory_terms_old FOR EACH STATEMENT EXECUTE FUNCTION memory_terms_removed()`.execute(db);
  await sql`
    CREATE TRIGGER memory_terms_update_1_old AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS memory_terms_old FOR EACH STATEMENT EXECUTE FUNCTION memory_terms_removed()`.execute(db);
  await sql`
    CREATE TRIGGER memory_terms_update_2_new AFTER UPDATE ON memories
    REFERENCING NEW TABLE AS memory_terms_new FOR EACH STATEMENT EXECUTE FUNCTION memory_terms_added()`.execute(db);
  await sql`
    INSERT INTO memory_terms (app_name, user_id, lexeme, entries)
    SELECT m.app_name, m.user_id, l.lexeme, count(*)
    FROM memories m, unnest(array_prepend('', tsvector_to_array(m.search))) AS l(lexeme)
    GROUP BY 1, 2, 3`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ["memory_terms_insert", "memory_terms_delete", "memory_terms_update_1_old", "memory_terms_update_2_new"]) {
    await sql`DROP TRIGGER ${sql.id(trigger)} ON memories`.execute(db);
  }
  await sql`DROP FUNCTION memory_terms_added(), memory_terms_removed()`.execute(db);
  await sql`DROP TABLE memory_terms`.execute(db);
}
