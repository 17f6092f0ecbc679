import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/ts/grpc/health/v1/health_pb.js";

/**
 * Serving status per service name ("" is the whole server), as the standard
 * grpc.health.v1 protocol reports it to load balancers and orchestrators.
 */
export class HealthRegistry {
  readonly #statuses = new Map<string, Status>();
  readonly #watchers = new Set<() => void>();
  #final = false;

  constructor(services: string[]) {
    for (const name of ["", ...services]) this.#statuses.set(name, Status.SERVING);
  }

  get(service: string): Status | undefined {
    return this.#statuses.get(service);
  }

  setAll(status: Status): void {
    if (this.#final) return;
    for (const name of this.#statuses.keys()) this.#statuses.set(name, status);
    for (const wake of this.#watchers) wake();
  }

  /**
   * NOT_SERVING for good: the server is going away. Watch streams report it
   * and then end, so they do not hold the shutdown open until the grace
   * period cuts them.
   */
  shutdown(): void {
    this.setAll(Status.NOT_SERVING);
    this.#final = true;
  }

  get final(): boolean {
    return this.#final;
  }

  entries(): [string, Status][] {
    return [...this.#statuses];
  }

  /** Resolves on the next status change or when the signal aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#watchers.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.#watchers.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  get watcherCount(): number {
    return this.#watchers.size;
  }
}

export function healthServiceImpl(registry: HealthRegistry): ServiceImpl<typeof Health> {
  return {
    check(req) {
      const status = registry.get(req.service);
      if (status === undefined) throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      return create(HealthCheckResponseSchema, { status });
    },
    list() {
      const statuses = Object.fromEntries(
        registry.entries().map(([name, status]) => [name, create(HealthCheckResponseSchema, { status })]),
      );
      return create(HealthListResponseSchema, { statuses });
    },
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const status = registry.get(req.service) ?? Status.SERVICE_UNKNOWN;
        if (status !== last) {
          last = status;
          yield create(HealthCheckResponseSchema, { status });
        }
        if (registry.final) return;
        await registry.changed(ctx.signal);
      }
    },
  };
}
