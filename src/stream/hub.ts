import { setMaxListeners } from "node:events";
import { sql } from "kysely";
import type { Logger } from "../log/logger.js";
import { EVENTS_CHANNEL } from "../storage/channels.js";
import type { OpenDatabase } from "../storage/database.js";
import { EventLog } from "../storage/event-log.js";
import { EventFeed } from "./feed.js";
import { PgNotifications } from "./pg-notifications.js";
import type { TailDeps } from "./tail.js";

export interface HubOptions {
  /** The retention cutoff of an app (expired sessions are gone for tails too). */
  liveSince?: (appName: string) => bigint | undefined;
  /** Postgres URL for the LISTEN connection; undefined for the embedded store. */
  listenUrl: string | undefined;
  feedBatch: number;
  feedPollMs: number;
}

/**
 * The streaming machinery of one process: the shared feed, and, on
 * PostgreSQL, the LISTEN connection and the NOTIFY that tells other
 * replicas to look. Writers report here after they commit.
 */
export class StreamHub {
  readonly feed: EventFeed;
  readonly log: EventLog;
  readonly notifications: PgNotifications | undefined;
  readonly #database: OpenDatabase;
  readonly #logger: Logger;
  readonly #liveSince: (appName: string) => bigint | undefined;
  readonly #stopping = new AbortController();
  #notifyInFlight = false;
  #notifyAgain = false;

  constructor(database: OpenDatabase, logger: Logger, options: HubOptions) {
    this.#database = database;
    this.#logger = logger;
    this.#liveSince = options.liveSince ?? (() => undefined);
    // Every open tail links its signal to this one.
    setMaxListeners(0, this.#stopping.signal);
    this.log = new EventLog(database.db);
    this.feed = new EventFeed(this.log, logger, { batch: options.feedBatch, pollMs: options.feedPollMs });
    this.notifications = options.listenUrl
      ? new PgNotifications(options.listenUrl, logger, {
          events: () => this.feed.wake(),
          deleted: (pk) => this.feed.sessionDeleted(pk),
          reconnected: () => this.feed.resetAll(),
        })
      : undefined;
  }

  async start(): Promise<void> {
    await this.notifications?.start();
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

  /** An event was committed by this process. */
  appended(): void {
    this.feed.wake();
    if (this.notifications) this.#notifyReplicas();
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
