import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { StreamEventsRequestSchema, StreamedEvent } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { store } from "./api.js";

export type TailStatus = "connecting" | "live" | "reconnecting" | "ended";

export interface TailOptions {
  /** The request for the next attempt: it resumes from what was processed last. */
  request(cursor: string | undefined): MessageInitShape<typeof StreamEventsRequestSchema>;
  onEvent(event: StreamedEvent): void;
  onStatus(status: TailStatus, detail: string): void;
  heartbeatMs: number;
}

// These end a tail for good; anything else (the server restarting, a proxy
// cutting the stream, a lost network) is retried from the last cursor.
const FINAL = new Set([Code.NotFound, Code.PermissionDenied, Code.Unauthenticated, Code.InvalidArgument, Code.Unimplemented]);

/**
 * Follows a StreamEvents tail and keeps following it across disconnects:
 * each attempt resumes after the last event or heartbeat processed, so events
 * arrive once each, in order. A stream silent for three heartbeats is dead
 * (a proxy may hold a broken connection open) and is replaced.
 */
export function follow(options: TailOptions): { stop(): void } {
  let stopped = false;
  let current: AbortController | undefined;
  let cursor: string | undefined;
  let wake: (() => void) | undefined;

  const run = async () => {
    let attempt = 0;
    while (!stopped) {
      const ctrl = new AbortController();
      current = ctrl;
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => ctrl.abort(new Error("no heartbeat")), options.heartbeatMs * 3);
      };
      options.onStatus(attempt === 0 ? "connecting" : "reconnecting", attempt === 0 ? "" : `attempt ${attempt + 1}`);
      try {
        arm();
        for await (const res of store.streamEvents(options.request(cursor), { signal: ctrl.signal })) {
          arm();
          const kind = res.kind;
          if (kind.case === "event") options.onEvent(kind.value);
          if (kind.case === "caughtUp") {
            attempt = 0;
            options.onStatus("live", "");
          }
          if (kind.case) cursor = kind.value.cursor;
        }
      } catch (err) {
        if (stopped) return;
        const ce = ConnectError.from(err);
        if (FINAL.has(ce.code)) {
          options.onStatus("ended", ce.rawMessage);
          return;
        }
      } finally {
        clearTimeout(watchdog);
      }
      if (stopped) return;
      attempt++;
      options.onStatus("reconnecting", `attempt ${attempt + 1}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(250 * 2 ** Math.min(attempt, 5), 5000));
      });
    }
  };
  void run();
  return {
    stop() {
      stopped = true;
      current?.abort();
      wake?.();
    },
  };
}

export function statusBadge(): { element: HTMLElement; set(status: TailStatus, detail: string): void } {
  const element = document.createElement("span");
  element.className = "live-badge";
  element.setAttribute("role", "status");
  element.setAttribute("aria-live", "polite");
  const set = (status: TailStatus, detail: string) => {
    element.dataset.status = status;
    element.textContent = detail ? `${status}: ${detail}` : status;
    element.title = detail;
  };
  set("connecting", "");
  return { element, set };
}
