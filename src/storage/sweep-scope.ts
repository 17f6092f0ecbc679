import { type RawBuilder, sql } from "kysely";

/** Which apps a retention sweep covers: one app, or every app but those with their own time-to-live. */
export type SweepScope = { appName: string } | { except: string[] };

/** The `app_name` condition of a sweep over `scope`, shared by every table that expires rows. */
export function sweepScopeFilter(scope: SweepScope): RawBuilder<unknown> {
  if ("appName" in scope) return sql`app_name = ${scope.appName}`;
  return scope.except.length === 0 ? sql`true` : sql`app_name NOT IN (${sql.join(scope.except)})`;
}
