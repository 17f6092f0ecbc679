// Preloaded into the server by `npm run bench -- --profile`
// (node --import tsx --import ./bench/count-queries.ts src/main.ts): counts
// every query node-postgres sends, one database round trip each, by
// statement, and writes the counts to SESSIONSTORE_BENCH_QUERY_LOG at exit.

import { writeFileSync } from "node:fs";
import pg from "pg";

const out = process.env.SESSIONSTORE_BENCH_QUERY_LOG;
if (out) {
  const counts = new Map<string, number>();
  const keys = new Map<string, string>();
  const original = pg.Client.prototype.query;
  const counting = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === "string" ? first : (first?.text ?? "?");
    let key = keys.get(text);
    if (key === undefined) {
      key = text.replace(/\s+/g, " ").trim().slice(0, 110);
      if (keys.size < 10_000) keys.set(text, key);
    }
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  pg.Client.prototype.query = counting as unknown as typeof original;
  process.on("exit", () => {
    writeFileSync(out, `${JSON.stringify(Object.fromEntries(counts), null, 2)}\n`);
  });
}
