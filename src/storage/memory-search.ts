import { type RawBuilder, sql } from "kysely";
import { filterSql, liveScope, MEMORY_COLUMNS, type MemoryFilterQuery, type MemoryRow, type MemoryScope } from "./memory-sql.js";
import { anyOf, COUNT_CAP, type WeightedTerm } from "./memory-terms.js";

export interface SearchQuery {
  scope: MemoryScope;
  /** May be empty when `embedding` is set. */
  text: string;
  /** `any`: an entry holding any word matches; `websearch`: PostgreSQL's websearch syntax. */
  mode: "any" | "websearch";
  embedding?: number[] | undefined;
  limit: number;
  filter: MemoryFilterQuery;
  /**
   * For `any`: the query's words that the user's entries hold, weighted (see
   * memory-terms.ts). Unset: PostgreSQL's ts_rank_cd alone.
   */
  terms?: WeightedTerm[] | undefined;
}

export interface SearchRow extends MemoryRow {
  score: number;
  highlight: string | null;
  text_score: number | null;
  vector_distance: number | null;
}

/** Rank fusion constant of reciprocal rank fusion (Cormack et al.): 60. */
const RRF_K = 60;
/** Recency halves an entry's weight bonus every 30 days; it never outweighs a better text match. */
const RECENCY_DAYS = 30;

/**
 * The words of the query as a tsquery. `any` is plainto_tsquery (the query
 * normalized with the app's configuration: lowercased, stemmed, stop words
 * dropped as configured, nothing read as syntax) with its ANDs made ORs;
 * ts_rank_cd then ranks entries with more and closer matches higher. Both
 * forms are immutable functions of the request's values, so the planner
 * folds them to a constant and can estimate from the index statistics how
 * rare the words are: a rare word is looked up in the GIN index instead of
 * reading all of the user's entries.
 */
export function tsquery(text: string, mode: SearchQuery["mode"], config: string): RawBuilder<string> {
  if (mode === "websearch") return sql<string>`websearch_to_tsquery(${config}::regconfig, ${text})`;
  return sql<string>`replace(plainto_tsquery(${config}::regconfig, ${text})::text, ' & ', ' | ')::tsquery`;
}

/**
 * One statement for text, vector and hybrid search. Each ranking reads the
 * user's matching entries through an index (the GIN index over app, user and
 * words; the listing index for the user's embeddings), keeps its best
 * `candidates`, and the two are fused by reciprocal rank; highlights are
 * made only for the page returned.
 */
export function searchQuery(q: SearchQuery, ctx: { textConfig: string; liveSince: bigint | undefined; now: bigint }) {
  const candidates = Math.max(q.limit * 4, 50);
  const where = sql`${liveScope(q.scope, ctx.liveSince, ctx.now)} AND ${filterSql(q.filter)}`;
  const hasText = q.text.trim() !== "";
  const weighted = q.mode === "any" && q.terms !== undefined && q.terms.length > 0 ? q.terms : undefined;
  // Ranking and highlights use every word; with weights, only the telling
  // words select the candidates.
  const query = weighted ? sql`${anyOf(weighted.map((t) => t.lexeme))}::tsquery` : tsquery(q.text, q.mode, ctx.textConfig);
  const selective = weighted?.filter((t) => t.selective);
  const match = selective && selective.length > 0 ? sql`${anyOf(selective.map((t) => t.lexeme))}::tsquery` : query;
  // No word selects (each is held by more than COUNT_CAP / 2 of the user's
  // entries): nothing in the question tells entries apart, so only the
  // newest COUNT_CAP entries holding any of its words are ranked, read
  // newest first from the listing index. Otherwise such a question would
  // read most of the user's memory, however large.
  const pool =
    weighted && !(selective && selective.length > 0)
      ? sql`(SELECT m.pk, m.search, m.timestamp_ns FROM memories m WHERE ${where} AND m.search @@ ${match}
          ORDER BY m.pk DESC LIMIT ${COUNT_CAP}) m`
      : undefined;
  const relevance = weighted
    ? sql`(${sql.join(
        weighted.map((t) => sql`CASE WHEN m.search @@ ${anyOf([t.lexeme])}::tsquery THEN ${t.idf}::float8 ELSE 0 END`),
        sql` + `,
      )}) * (1 + 0.5 * ts_rank_cd(m.search, ${query}, 32))`
    : sql`ts_rank_cd(m.search, ${query}, 32)`;
  const hasVector = q.embedding !== undefined;
  const ageDays = sql`greatest(${ctx.now} - m.timestamp_ns, 0) / ${86_400_000_000_000}::float8`;
  const textRank = hasText
    ? sql`
      text_hits AS (
        SELECT m.pk, ${relevance} * (0.8 + 0.2 / (1 + ${ageDays} / ${RECENCY_DAYS})) AS score, m.timestamp_ns
        FROM ${pool ?? sql`memories m WHERE ${where} AND m.search @@ ${match}`}
        ORDER BY score DESC, m.timestamp_ns DESC, m.pk DESC
        LIMIT ${candidates}
      ),
      text_ranked AS (SELECT pk, score, row_number() OVER (ORDER BY score DESC, timestamp_ns DESC, pk DESC) AS r FROM text_hits),`
    : sql`text_ranked AS (SELECT NULL::bigint AS pk, NULL::float8 AS score, NULL::bigint AS r WHERE false),`;
  const vector = hasVector ? `[${(q.embedding as number[]).join(",")}]` : "";
  const vectorRank = hasVector
    ? sql`
      vector_hits AS (
        SELECT m.pk, m.embedding::vector <=> ${vector}::vector AS distance, m.timestamp_ns
        FROM memories m
        WHERE ${where} AND m.embedding IS NOT NULL AND cardinality(m.embedding) = ${(q.embedding as number[]).length}
        ORDER BY distance, m.timestamp_ns DESC, m.pk DESC
        LIMIT ${candidates}
      ),
      vector_ranked AS (SELECT pk, distance, row_number() OVER (ORDER BY distance, timestamp_ns DESC, pk DESC) AS r FROM vector_hits),`
    : sql`vector_ranked AS (SELECT NULL::bigint AS pk, NULL::float8 AS distance, NULL::bigint AS r WHERE false),`;
  // One ranking alone keeps its own score; two are fused by reciprocal rank.
  const score =
    hasText && hasVector
      ? sql`coalesce(1.0 / (${RRF_K} + t.r), 0) + coalesce(1.0 / (${RRF_K} + v.r), 0)`
      : hasText
        ? sql`t.score`
        : sql`1 - v.distance`;
  return sql<SearchRow>`
    WITH ${textRank}
    ${vectorRank}
    fused AS (
      SELECT coalesce(t.pk, v.pk) AS pk, (${score})::float8 AS score, t.score::float8 AS text_score, v.distance::float8 AS vector_distance
      FROM text_ranked t FULL JOIN vector_ranked v ON t.pk = v.pk
      ORDER BY 2 DESC, 1 DESC
      LIMIT ${q.limit}
    )
    SELECT ${MEMORY_COLUMNS}, f.score, f.text_score, f.vector_distance,
      CASE WHEN f.text_score IS NULL THEN NULL
        ELSE ts_headline(${ctx.textConfig}::regconfig, m.body, ${query},
          'MaxFragments=2, MinWords=8, MaxWords=24, FragmentDelimiter=" ... "') END AS highlight
    FROM fused f JOIN memories m ON m.pk = f.pk
    ORDER BY f.score DESC, m.timestamp_ns DESC, m.pk DESC`;
}
