import { type Kysely, sql } from "kysely";
import { preparedComment } from "./database.js";
import type { MemoryScope } from "./memory-sql.js";
import type { Database } from "./schema.js";

// How much each word of a question says, in this user's memory. Questions
// in natural language are mostly small words ("what", "is", "my") that most
// entries hold; with PostgreSQL's ranking alone an entry holding two of
// them outranks the one entry holding the rare word that matters. So, as
// BM25 does, each word is weighted by its inverse document frequency, here
// counted among the user's own entries (memory_terms, kept by triggers on
// write: migration 0011), and words held by more than half of them only
// rank, they do not select: a search then reads the entries holding the
// telling words, not most of the user's memory. Counts include entries
// expired but not yet swept: weights need no more precision.

/**
 * Counts are taken up to here: past it a word is common whatever the exact
 * count. So a word that selects is held by at most COUNT_CAP / 2 entries,
 * and a search's candidates stay bounded however large the user's memory.
 */
export const COUNT_CAP = 200;
/**
 * Below this many entries every word selects: in a small memory a word most
 * entries hold may still be what the question is about, and reading all
 * of a few entries costs nothing.
 */
export const MIN_ENTRIES_TO_SKIP = 20;
/** Words of a query that are weighed; the rest are ignored. */
export const MAX_TERMS = 32;

export interface WeightedTerm {
  lexeme: string;
  idf: number;
  /** Held by at most half of the user's entries (or the memory is small): it selects candidates. */
  selective: boolean;
}

/** A tsquery literal matching any of the lexemes, each quoted so that nothing is read as syntax. */
export function anyOf(lexemes: string[]): string {
  return lexemes.map((l) => `'${l.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`).join(" | ");
}

// One text for every search (the words are an argument): prepared once per connection.
const WEIGH_PREPARED = preparedComment("sessionstore_memory_terms");

/**
 * The query's lexemes under the app's text configuration (lowercased,
 * stemmed, stop words dropped as configured; the first MAX_TERMS in
 * lexeme order), each with how many of the user's entries hold it, after a
 * first row (lexeme '') with the user's number of entries: one statement,
 * one primary-key lookup per word (a subquery per word, so that it stays a
 * lookup whatever the table's statistics say).
 */
export function termCountsQuery(scope: MemoryScope, config: string, text: string) {
  return sql<{ lexeme: string; entries: number }>`${sql.raw(WEIGH_PREPARED)}
    SELECT l.lexeme, coalesce((
        SELECT t.entries FROM memory_terms t
        WHERE t.app_name = ${scope.appName} AND t.user_id = ${scope.userId} AND t.lexeme = l.lexeme), 0)::int AS entries
    FROM unnest(array_prepend('', (tsvector_to_array(to_tsvector(${config}::regconfig, ${text})))[1:${MAX_TERMS}]))
      WITH ORDINALITY AS l(lexeme, i)
    ORDER BY l.i`;
}

/**
 * The query's words that the user's entries hold, weighted. Counts are
 * taken up to COUNT_CAP, so weights and selection are those of counting
 * the entries up to the cap.
 */
export async function weighTerms(
  db: Kysely<Database>,
  scope: MemoryScope,
  config: string,
  text: string,
): Promise<{ entries: number; lexemes: number; terms: WeightedTerm[] }> {
  const { rows } = await termCountsQuery(scope, config, text).execute(db);
  const n = Math.min(Number(rows[0]?.entries ?? 0), COUNT_CAP);
  const terms: WeightedTerm[] = [];
  for (const row of rows.slice(1)) {
    const df = Math.min(Number(row.entries), COUNT_CAP);
    // A word no entry holds can neither match nor rank.
    if (df > 0)
      terms.push({ lexeme: row.lexeme, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)), selective: n < MIN_ENTRIES_TO_SKIP || df * 2 <= n });
  }
  return { entries: n, lexemes: rows.length - 1, terms };
}
