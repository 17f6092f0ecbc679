import { randomUUID } from "node:crypto";

/** A name no other test uses, so tests can share one database. */
export function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}
