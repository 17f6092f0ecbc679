import type { CompiledQuery, Kysely } from "kysely";

interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

/**
 * Rows a query actually read from one table, over all loops, from EXPLAIN
 * ANALYZE: how the suite checks that a query's cost follows what it returns
 * without timing anything. Rows a scan looked at and dropped count too, since a
 * scan that returns nothing may still have read the whole table.
 */
export async function rowsRead(db: Kysely<unknown>, compiled: CompiledQuery, table: string): Promise<number> {
  const explained = await db.executeQuery<{ "QUERY PLAN": unknown }>({
    ...compiled,
    sql: `EXPLAIN (ANALYZE, FORMAT JSON) ${compiled.sql}`,
  });
  const raw = explained.rows[0]?.["QUERY PLAN"];
  const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
  let total = 0;
  const visit = (node: PlanNode) => {
    if (node["Relation Name"] === table) {
      const removed = (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0);
      total += (node["Actual Rows"] + removed) * node["Actual Loops"];
    }
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(plan[0].Plan);
  return total;
}
