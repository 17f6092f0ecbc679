import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { RedactorSet } from "../redact/redactor.js";
import type { Sweeper } from "../retention/sweeper.js";
import type { OpenDatabase, PoolCounts } from "../storage/database.js";
import type { SessionStore } from "../storage/session-store.js";
import type { StreamHub } from "../stream/hub.js";

// The parts keep plain counters (a number, a Map) where they already are, and
// this reads them at a scrape: nothing on the hot path calls into
// prom-client except the RPC, group-commit and feed-lag histograms, which only observe.

/** What a scrape reads from; set once the server's parts exist. */
export interface MetricSources {
  database: OpenDatabase;
  store: SessionStore;
  hub: StreamHub;
  redactors: RedactorSet;
  sweeper: Sweeper;
}

const RPC_LABELS = ["service", "method", "code", "protocol"] as const;
type RpcLabel = (typeof RPC_LABELS)[number];

/** One server's metrics, in a registry of its own: tests run many servers in one process. */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly rpcHandled: Counter<RpcLabel>;
  readonly rpcSeconds: Histogram<RpcLabel>;
  readonly batchSize: Histogram;
  readonly batchWaitSeconds: Histogram;
  readonly feedLagSeconds: Histogram<"scope">;
  #sources: MetricSources | undefined;

  constructor() {
    const registers = [this.registry];
    this.rpcHandled = new Counter({
      name: "sessionstore_rpc_handled_total",
      help: "RPCs answered, by service, method, status code and protocol (grpc, grpc_web, connect).",
      labelNames: RPC_LABELS,
      registers,
    });
    this.rpcSeconds = new Histogram({
      name: "sessionstore_rpc_duration_seconds",
      help: "Time from the request's arrival to its status; for server streams (StreamEvents), the stream's whole life.",
      labelNames: RPC_LABELS,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.batchSize = new Histogram({
      name: "sessionstore_append_batch_size",
      help: "Appends per group-commit batch (one statement, one transaction).",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128],
      registers,
    });
    this.batchWaitSeconds = new Histogram({
      name: "sessionstore_append_batch_wait_seconds",
      help: "How long each append waited for its group-commit batch to go to the database.",
      buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.feedLagSeconds = new Histogram({
      name: "sessionstore_feed_lag_seconds",
      help: "From an append's commit to a tail handing the event over, by the tail's scope; events this server committed.",
      labelNames: ["scope"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });

    const read = <T>(get: (s: MetricSources) => T): T | undefined => (this.#sources ? get(this.#sources) : undefined);
    /** A counter whose value is kept elsewhere as a running total. */
    const total = (name: string, help: string, get: (s: MetricSources) => number | undefined) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          const value = read(get);
          this.reset();
          if (value !== undefined) this.inc(value);
        },
      });
    /** The same, with one label, from a Map of running totals. */
    const totals = (name: string, help: string, label: string, get: (s: MetricSources) => ReadonlyMap<string, number> | undefined) =>
      new Counter({
        name,
        help,
        labelNames: [label],
        registers,
        collect() {
          const values = read(get);
          this.reset();
          for (const [key, value] of values ?? []) this.inc({ [label]: key }, value);
        },
      });

    totals(
      "sessionstore_appends_total",
      "Appends answered by the store, by outcome (ok, duplicate, stale, not_found, ...).",
      "outcome",
      (s) => s.store.appendOutcomes,
    );
    total("sessionstore_events_stored_total", "Events written to the log: appended, and copied by forks.", (s) => s.store.eventsStored);
    new Gauge({
      name: "sessionstore_tails_open",
      help: "Open tails (StreamEvents), by what they follow: session, user or app.",
      labelNames: ["scope"],
      registers,
      collect() {
        const counts = read((s) => s.hub.feed.subscribersByScope());
        if (!counts) return;
        for (const [scope, n] of Object.entries(counts)) this.set({ scope }, n);
      },
    });
    total(
      "sessionstore_tail_overflows_total",
      "Times a slow tail's buffer filled and it went back to reading the table.",
      (s) => s.hub.feed.overflows,
    );
    total(
      "sessionstore_listen_reconnects_total",
      "Times the LISTEN connection (PostgreSQL) came back after it was lost; always 0 on the embedded store.",
      (s) => s.hub.notifications?.reconnects ?? 0,
    );
    new Gauge({
      name: "sessionstore_database_reachable",
      help: "1 while the database answers, 0 while it is unreachable (the health service then says NOT_SERVING).",
      registers,
      collect() {
        const reachable = read((s) => s.database.health.reachable);
        if (reachable !== undefined) this.set(reachable ? 1 : 0);
      },
    });
    totals(
      "sessionstore_database_errors_total",
      'Failed queries and driver errors, by SQLSTATE class ("23", "40", "53", ...), "connection" (lost or refused without one) or "other".',
      "class",
      (s) => s.database.health.errorsByClass,
    );
    totals("sessionstore_redactions_total", "Spans replaced by redaction, by detector.", "detector", (s) => s.redactors.counts);
    total("sessionstore_sessions_swept_total", "Expired sessions deleted by the retention sweeper.", (s) => s.sweeper.sessionsSwept);
  }

  /** Connects the scrape-time readings to the server's parts. */
  follow(sources: MetricSources): void {
    this.#sources = sources;
    // The embedded store has no pool: no series rather than zeros that look like an empty one.
    const counts = sources.database.pool;
    if (!counts) return;
    const registers = [this.registry];
    const pool = (name: string, help: string, get: (p: PoolCounts) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(get(counts));
        },
      });
    pool("sessionstore_db_pool_connections", "Connections PostgreSQL's pool holds, busy or idle.", (p) => p.totalCount);
    pool("sessionstore_db_pool_idle", "Connections idle in PostgreSQL's pool.", (p) => p.idleCount);
    pool("sessionstore_db_pool_waiting", "Queries waiting for a connection from PostgreSQL's pool.", (p) => p.waitingCount);
  }

  /** The Prometheus text: this server's series, then the process's. */
  async text(): Promise<string> {
    const [own, proc] = await Promise.all([this.registry.metrics(), processRegistry().metrics()]);
    return `${own}\n${proc}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

let shared: Registry | undefined;

/**
 * CPU, memory, event-loop lag, GC, handles: one set per process, however
 * many servers it runs, so in a registry of its own (not prom-client's
 * global one), made on the first scrape.
 */
function processRegistry(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}
