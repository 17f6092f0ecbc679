import { type Kysely, type RawBuilder, sql } from "kysely";
import type { MemoryScope } from "./memory-sql.js";
import type { Database } from "./schema.js";

// How much each word of a question says, in this user's memory. Questions
// in natural language are mostly small words ("what", "is", "my") that most
// entries hold; with PostgreSQL's ranking alone an entry holding two of
// them outranks the one entry holding the rare word that matters. So, as
// BM25 does, each word is weighted by its inverse document frequency, here
// counted among the user's own entries (through the indexes, capped), and
// words held by more than half of them only rank, they do not select:
// a search then reads the entries holding the telling words, not most of
// the user's memory. Counts include entries expired but not yet swept:
// weights need no more precision, and the counts stay index lookups.

/**
 * Counting stops here: past it a word is common whatever the exact count,
 * and a search's cost stays bounded however large the user's memory.
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

/** The query's lexemes under the app's text configuration (lowercased, stemmed, stop words dropped as configured). */
export async function queryLexemes(db: Kysely<Database>, config: string, text: string): Promise<string[]> {
  const { rows } = await sql<{ lexemes: string[] | null }>`
    SELECT tsvector_to_array(to_tsvector(${config}::regconfig, ${text})) AS lexemes`.execute(db);
  return (rows[0]?.lexemes ?? []).slice(0, MAX_TERMS);
}

/** A tsquery literal matching any of the lexemes, each quoted so that nothing is read as syntax. */
export function anyOf(lexemes: string[]): string {
  return lexemes.map((l) => `'${l.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`).join(" | ");
}

/**
 * The user's live entries (n) and, per lexeme, how many hold it (d0, d1 ...),
 * each counted up to COUNT_CAP. Every lexeme is a constant of the statement,
 * so each count is planned as a lookup in the GIN index.
 */
export function termCountsQuery(scope: MemoryScope, lexemes: string[]) {
  const capped = (where: RawBuilder<unknown>) =>
    sql`(SELECT count(*)::int FROM (
      SELECT 1 FROM memories m WHERE m.app_name = ${scope.appName} AND m.user_id = ${scope.userId} AND ${where} LIMIT ${COUNT_CAP}) x)`;
  const columns = lexemes.map((l, i) => sql`${capped(sql`m.search @@ ${anyOf([l])}::tsquery`)} AS ${sql.ref(`d${i}`)}`);
  return sql<Record<string, number>>`SELECT ${sql.join([sql`${capped(sql`true`)} AS n`, ...columns])}`;
}

export async function weighTerms(
  db: Kysely<Database>,
  scope: MemoryScope,
  lexemes: string[],
): Promise<{ entries: number; terms: WeightedTerm[] }> {
  const { rows } = await termCountsQuery(scope, lexemes).execute(db);
  const row = rows[0] ?? {};
  const n = Number(row.n ?? 0);
  const terms: WeightedTerm[] = [];
  lexemes.forEach((lexeme, i) => {
    const df = Number(row[`d${i}`] ?? 0);
    // A word no entry holds can neither match nor rank.
    if (df > 0) terms.push({ lexeme, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)), selective: n < MIN_ENTRIES_TO_SKIP || df * 2 <= n });
  });
  return { entries: n, terms };
}
