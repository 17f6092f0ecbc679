// PostgreSQL NOTIFY channels between replicas. Payloads stay tiny: tails read
// the events themselves from the table.

/** Some replica committed events (empty payload). */
export const EVENTS_CHANNEL = "sessionstore_events";
/** A session was deleted (payload: its primary key). */
export const DELETED_CHANNEL = "sessionstore_deleted";
