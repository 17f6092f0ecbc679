import pg from "pg";
import type { Logger } from "../log/logger.js";
import { DELETED_CHANNEL, EVENTS_CHANNEL } from "../storage/channels.js";

export interface NotificationHandlers {
  /** Some replica committed events. */
  events(): void;
  /** Some replica deleted the session with this primary key. */
  deleted(sessionPk: bigint): void;
  /** The connection was re-established: notifications may have been missed. */
  reconnected(): void;
  /** The connection dropped, or a new one could not be made: the database may be gone. */
  lost(err: Error | undefined): void;
}

const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5000;
/** A connection attempt that hangs (a peer that vanished) counts as failed after this. */
const CONNECT_TIMEOUT_MS = 5000;

/** How replicas recognise each other's LISTEN connections in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = "sessionstore-listen";

/**
 * The process's single LISTEN connection (not one per tail). If it drops it
 * reconnects with jittered exponential backoff (replicas that lost the
 * database together do not come back in step) and reports `reconnected`, so
 * every open tail re-reads from its own position and nothing sent meanwhile
 * is lost.
 */
export class PgNotifications {
  readonly #url: string;
  readonly #logger: Logger;
  readonly #handlers: NotificationHandlers;
  #client: pg.Client | undefined;
  #pid: number | undefined;
  #closed = false;
  #backoffMs = 0;
  #timer: NodeJS.Timeout | undefined;
  #connecting: Promise<void> | undefined;

  constructor(url: string, logger: Logger, handlers: NotificationHandlers) {
    this.#url = url;
    this.#logger = logger;
    this.#handlers = handlers;
  }

  /** The LISTEN backend's pid (tests terminate it). */
  get backendPid(): number | undefined {
    return this.#pid;
  }

  get connected(): boolean {
    return this.#pid !== undefined;
  }

  start(): Promise<void> {
    this.#connecting ??= this.#connect(false).finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const client = this.#client;
    this.#client = undefined;
    this.#pid = undefined;
    await client?.end().catch(() => {});
  }

  async #connect(isReconnect: boolean): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#url,
      keepAlive: true,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: LISTEN_APPLICATION_NAME,
    });
    let dropped = false;
    const onDrop = (err?: Error) => {
      if (dropped) return;
      dropped = true;
      if (this.#client === client) {
        this.#client = undefined;
        this.#pid = undefined;
      }
      client.removeAllListeners("notification");
      void client.end().catch(() => {});
      if (this.#closed) return;
      this.#logger.warn("LISTEN connection lost; reconnecting", { err: err?.message });
      this.#handlers.lost(err);
      this.#scheduleReconnect();
    };
    client.on("error", onDrop);
    client.on("end", () => onDrop());
    client.on("notification", (msg) => {
      if (msg.channel === EVENTS_CHANNEL) this.#handlers.events();
      else if (msg.channel === DELETED_CHANNEL && msg.payload && /^\d+$/.test(msg.payload)) this.#handlers.deleted(BigInt(msg.payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      await client.query(`LISTEN ${DELETED_CHANNEL}`);
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      if (this.#closed || dropped) {
        await client.end().catch(() => {});
        return;
      }
      this.#client = client;
      this.#pid = rows[0]?.pid;
      this.#backoffMs = 0;
      if (isReconnect) {
        this.#logger.info("LISTEN connection re-established");
        this.#handlers.reconnected();
      }
    } catch (err) {
      onDrop(err instanceof Error ? err : new Error(String(err)));
      if (!isReconnect) throw err;
    }
  }

  #scheduleReconnect(): void {
    if (this.#timer || this.#closed) return;
    this.#backoffMs = Math.min(Math.max(this.#backoffMs * 2, FIRST_RETRY_MS), MAX_RETRY_MS);
    // "Equal jitter": at least half the backoff, so the pace still slows.
    const delay = this.#backoffMs / 2 + Math.random() * (this.#backoffMs / 2);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#connect(true);
    }, delay);
    this.#timer.unref();
  }
}
