/**
 * What the store tells whoever serves live reads (the stream hub) about the
 * writes it committed: every change to the log goes through here, so tails
 * learn of appends and deletions the same way, whichever call made them.
 * Called after the commit, never for a write that was rolled back or
 * refused, and must not throw.
 */
export interface StoreObserver {
  /**
   * New events were committed (duplicates of stored ones are not new):
   * those an append stored, as they are acknowledged; none for a fork's
   * copies, which are not news.
   */
  appended(committed?: readonly CommittedEvent[]): void;
  /** A session was deleted (a delete, an erasure, an expired id taken over, a sweep), with its primary key. */
  deleted(sessionPk: bigint): void;
}

/** Where an appended event landed in the log. */
export interface CommittedEvent {
  appName: string;
  userId: string;
  sessionId: string;
  seq: bigint;
}

export const NO_OBSERVER: StoreObserver = { appended: () => {}, deleted: () => {} };
