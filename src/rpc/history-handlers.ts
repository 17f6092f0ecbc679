import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ForkSessionResponseSchema, RewindSessionResponseSchema } from "../../gen/ts/sessionstore/v1/history_pb.js";
import type { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { nsToTimestamp } from "../domain/time.js";
import { notFound, type SessionStore } from "../storage/session-store.js";
import { sessionKey, toSession } from "./session-service.js";
import { invalid, requireId } from "./validate.js";

type HistoryImpl = Pick<ServiceImpl<typeof SessionService>, "forkSession" | "rewindSession">;

/** ForkSession and RewindSession: new histories from a session's whole log (storage/history.ts). */
export function historyHandlers(store: SessionStore): HistoryImpl {
  return {
    async forkSession(req) {
      const key = sessionKey(req);
      if (req.upToSeq !== undefined && req.upToSeq < 0n) throw invalid("up_to_seq must not be negative");
      const newSessionId = req.newSessionId ? requireId("new_session_id", req.newSessionId) : undefined;
      const fork = await store.forkSession(key, { upToSeq: req.upToSeq, newSessionId });
      if (!fork) throw notFound(key);
      return create(ForkSessionResponseSchema, { session: toSession(fork) });
    },

    async rewindSession(req) {
      const key = sessionKey(req);
      const invocationId = requireId("rewind_before_invocation_id", req.rewindBeforeInvocationId);
      if (req.expectedRevision !== undefined && req.expectedRevision < 0n) throw invalid("expected_revision must not be negative");
      const result = await store.rewindSession(key, invocationId, req.expectedRevision);
      return create(RewindSessionResponseSchema, {
        event: result.event,
        revision: result.revision,
        lastUpdateTime: nsToTimestamp(result.updateTimeNs),
      });
    },
  };
}
