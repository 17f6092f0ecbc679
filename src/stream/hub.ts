import { setMaxListeners } from "node:events";
import { sql } from "kysely";
import type { Logger } from "../log/logger.js";
import type { PolicySet } from "../policy/app-policy.js";
import { EVENTS_CHANNEL } from "../storage/channels.js";
import type { OpenDatabase } from "../storage/database.js";
import { EventLog } from "../storage/event-log.js";
import type { CommittedEvent, StoreObserver } from "../storage/store-observer.js";
import { CommitTimes } from "./commit-times.js";
import { EventFeed } from "./feed.js";
import { LISTEN_APPLICATION_NAME, PgNotifications } from "./pg-notifications.js";

const PEER_CHECK_MS = 2000;

import type { TailDeps } from "./tail.js";

export interface HubOptions {
  /** Where the retention cutoff comes from (expired sessions are gone for tails too): the apps' policies. */
  retention?: Pick<PolicySet, "liveSince">;
  /** Postgres URL for the LISTEN connection; undefined for the embedded store. */
  listenUrl: string | undefined;
  feedBatch: number;
  feedPollMs: number;
}

/**
 * The streaming machinery of one process: the shared feed, and, on
 * PostgreSQL, the LISTEN connection and the NOTIFY that tells other
 * replicas to look. The store reports here what it committed.
 */
export class StreamHub implements StoreObserver {
  readonly feed: EventFeed;
  readonly log: EventLog;
  readonly notifications: PgNotifications | undefined;
  /** When this process's recent appends were acknowledged, while tails are open (for the feed-lag metric). */
  readonly commitTimes = new CommitTimes();
  readonly #database: OpenDatabase;
  readonly #logger: Logger;
  readonly #liveSince: (appName: string) => bigint | undefined;
  readonly #stopping = new AbortController();
  #notifyInFlight = false;
  // Until the first look, assume there are other replicas: a missed NOTIFY costs latency, an extra one only a query.
  #peers = true;
  #peerTimer: NodeJS.Timeout | undefined;
  #notifyAgain = false;

  constructor(database: OpenDatabase, logger: Logger, options: HubOptions) {
    this.#database = database;
    this.#logger = logger;
    const retention = options.retention;
    this.#liveSince = retention ? (appName) => retention.liveSince(appName) : () => undefined;
    // Every open tail links its signal to this one.
    setMaxListeners(0, this.#stopping.signal);
    this.log = new EventLog(database.db);
    this.feed = new EventFeed(this.log, logger, { batch: options.feedBatch, pollMs: options.feedPollMs });
    this.notifications = options.listenUrl
      ? new PgNotifications(options.listenUrl, logger, {
          events: () => this.feed.wake(),
          deleted: (pk) => this.feed.sessionDeleted(pk),
          reconnected: () => this.feed.resetAll(),
          lost: () => database.health.suspect(),
        })
      : undefined;
  }

  async start(): Promise<void> {
    await this.notifications?.start();
    if (this.notifications) {
      await this.#lookForPeers();
      this.#peerTimer = setInterval(() => void this.#lookForPeers(), PEER_CHECK_MS);
      this.#peerTimer.unref();
    }
  }

  /** Whether another replica's LISTEN connection was seen on this database at the last look. */
  get hasPeers(): boolean {
    return this.#peers;
  }

  // A lone server has nobody to NOTIFY, and on the hot path that query is a
  // second round trip per append. So look for other replicas' LISTEN
  // connections every few seconds and NOTIFY only while there are some. A
  // replica that starts in between gets events through its feed's poll until
  // the next look; it loses none.
  async #lookForPeers(): Promise<void> {
    const own = this.notifications?.backendPid;
    try {
      const { rows } = await sql<{ peers: number }>`
        SELECT count(*)::int AS peers FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = ${LISTEN_APPLICATION_NAME} AND pid <> ${own ?? 0}`.execute(
        this.#database.db,
      );
      this.#peers = (rows[0]?.peers ?? 1) > 0;
    } catch {
      this.#peers = true;
    }
  }

  get tailDeps(): TailDeps {
    return {
      feed: this.feed,
      log: this.log,
      liveSince: this.#liveSince,
      sessionExists: async (pk, appName) => {
        const cutoff = this.#liveSince(appName);
        const row = await this.#database.db
          .selectFrom("sessions")
          .select("pk")
          .where("pk", "=", pk)
          .$if(cutoff !== undefined, (qb) => qb.where("update_time_ns", ">=", cutoff as bigint))
          .executeTakeFirst();
        return row !== undefined;
      },
    };
  }

  /** Events were committed by this process. */
  appended(committed?: readonly CommittedEvent[]): void {
    // Timed only while someone may deliver them: no cost without tails.
    if (committed && this.feed.subscriberCount > 0) this.commitTimes.record(committed, performance.now());
    else if (this.feed.subscriberCount === 0) this.commitTimes.clear();
    this.feed.wake();
    if (this.notifications && this.#peers) this.#notifyReplicas();
  }

  /** A session was deleted by this process (other replicas hear it from the DELETE's own NOTIFY). */
  deleted(sessionPk: bigint): void {
    this.feed.sessionDeleted(sessionPk);
  }

  /** Aborts when the server shuts down: open tails end with UNAVAILABLE. */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  stopTails(): void {
    this.#stopping.abort();
  }

  async close(): Promise<void> {
    if (this.#peerTimer) clearInterval(this.#peerTimer);
    this.stopTails();
    this.feed.close();
    await this.notifications?.close();
  }

  // NOTIFY outside the append's transaction: a notifying commit takes a
  // database-wide lock, which would serialize every append. Appends that land
  // while one NOTIFY is on its way share the next one. A replica that dies
  // between commit and NOTIFY is covered by the feed's periodic poll.
  #notifyReplicas(): void {
    if (this.#notifyInFlight) {
      this.#notifyAgain = true;
      return;
    }
    this.#notifyInFlight = true;
    sql`SELECT pg_notify(${EVENTS_CHANNEL}, '')`
      .execute(this.#database.db)
      .catch((err: unknown) => this.#logger.warn("NOTIFY failed; other replicas will poll", { err }))
      .finally(() => {
        this.#notifyInFlight = false;
        if (this.#notifyAgain) {
          this.#notifyAgain = false;
          this.#notifyReplicas();
        }
      });
  }
}
