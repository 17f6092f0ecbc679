// Formatting shared by the report's sections (report.ts, scale-report.ts).

import { fmt } from "./results.js";

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Milliseconds with as many decimals as the size calls for; "–" when not measured. */
export const ms = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v) ? "–" : v < 10 ? v.toFixed(2) : v < 1000 ? v.toFixed(1) : fmt(v);

/** A ratio, as "1.23×"; "–" when either side was not measured. */
export const times = (v: number) => (Number.isFinite(v) ? `${v < 10 ? v.toFixed(2) : v.toFixed(1)}×` : "–");
