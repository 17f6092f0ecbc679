import { create, type JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Session, SessionSchema } from "../../gen/ts/sessionstore/v1/session_pb.js";
import {
  AppendEventResponseSchema,
  CreateSessionResponseSchema,
  DeleteSessionResponseSchema,
  EraseUserDataResponseSchema,
  GetSessionResponseSchema,
  GetUserStateResponseSchema,
  ListEventsRequest_Order,
  ListEventsResponseSchema,
  ListSessionsResponseSchema,
  type SessionService,
} from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { mergeState, splitState, withoutTemp } from "../domain/state.js";
import { nsToTimestamp, timestampToNs } from "../domain/time.js";
import type { RedactorSet } from "../redact/redactor.js";
import type { MemoryStore } from "../storage/memory-store.js";
import { notFound, type SessionKey, type SessionStore, type StoredEvent, type StoredSession } from "../storage/session-store.js";
import type { StreamHub } from "../stream/hub.js";
import { asField, encodeWithStored, withEncoding } from "./encoded.js";
import { checkEvent } from "./event-rules.js";
import { historyHandlers } from "./history-handlers.js";
import { decodeToken, encodeToken, parseBigInt } from "./page-token.js";
import { type StreamSettings, streamEventsImpl } from "./stream-events.js";
import { checkJson, checkStoredTimestamp, checkTimestamp, invalid, MAX_STORED_NS, MIN_STORED_NS, pageSize, requireId } from "./validate.js";

export interface ServiceDeps {
  store: SessionStore;
  /** Deleting a session deletes its derived memories (per-app policy); erasing a user erases theirs. */
  memories: MemoryStore;
  hub: StreamHub;
  redactors: RedactorSet;
  streams: StreamSettings;
}

export function sessionServiceImpl({ store, memories, hub, redactors, streams }: ServiceDeps): ServiceImpl<typeof SessionService> {
  return {
    async createSession(req) {
      const appName = requireId("app_name", req.appName);
      const userId = requireId("user_id", req.userId);
      const sessionId = req.sessionId ? requireId("session_id", req.sessionId) : undefined;
      checkJson("state", req.state, { forbidNul: true });
      const createTimeNs = req.createTime ? timestampToNs(checkStoredTimestamp("create_time", req.createTime)) : undefined;
      const state = req.state && redactors.for(appName).redactJson(req.state);
      const stored = await store.createSession({ appName, userId, sessionId }, splitState(state), createTimeNs);
      return create(CreateSessionResponseSchema, { session: toSession(stored) });
    },

    async getSession(req) {
      const key = sessionKey(req);
      if (req.numRecentEvents !== undefined && req.numRecentEvents < 0) throw invalid("num_recent_events must not be negative");
      // Clamped to what a stored time can be: before 1677 means "every event".
      const afterNs = req.afterTimestamp ? clampNs(timestampToNs(checkTimestamp("after_timestamp", req.afterTimestamp))) : undefined;
      if (req.asOfSeq !== undefined && req.asOfSeq < 0n) throw invalid("as_of_seq must not be negative");
      const window = { numRecent: req.numRecentEvents, afterNs };
      const found: { session: StoredSession; events: StoredEvent[]; state?: JsonObject } | undefined =
        req.asOfSeq === undefined ? await store.getSession(key, window) : await store.sessionAsOf(key, req.asOfSeq, window);
      if (!found) throw notFound(key);
      // Encoded as the session without its events, then each event's stored
      // bytes as an `events` field (a repeated field may come after the
      // others), the whole as the response's `session`: no event is encoded again.
      const session = toSession(found.session);
      if (found.state && req.asOfSeq !== undefined) {
        session.state = found.state;
        session.revision = req.asOfSeq;
      }
      const sessionBytes = encodeWithStored(
        SessionSchema,
        session,
        SessionSchema.field.events,
        found.events.map((e) => e.body),
      );
      session.events = found.events.map((e) => e.event);
      return withEncoding(create(GetSessionResponseSchema, { session }), asField(GetSessionResponseSchema.field.session, sessionBytes));
    },

    async listSessions(req) {
      const appName = requireId("app_name", req.appName);
      const userId = req.userId === "" ? undefined : requireId("user_id", req.userId);
      const limit = pageSize("page_size", req.pageSize);
      const listing = ["ListSessions", appName, userId ?? "", ...(req.newestFirst ? ["newest"] : [])];
      let after: { updateTimeNs: bigint; id: string; userId: string } | undefined;
      if (req.pageToken) {
        const t = decodeToken("page_token", req.pageToken, listing, ["t", "i", "u"] as const);
        after = { updateTimeNs: parseBigInt("page_token", t.t), id: t.i, userId: t.u };
      }
      // One extra row tells whether another page exists.
      const rows = await store.listSessions({ appName, userId, limit: limit + 1, after, newestFirst: req.newestFirst });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextPageToken =
        rows.length > limit && last ? encodeToken(listing, { t: last.updateTimeNs.toString(), i: last.id, u: last.userId }) : "";
      return create(ListSessionsResponseSchema, { sessions: page.map((s) => toSession(s)), nextPageToken });
    },

    async deleteSession(req) {
      const key = sessionKey(req);
      await store.deleteSession(key);
      // After the session: a failure here leaves the memories, and the
      // client's retry (a missing session is no error) deletes them.
      if (memories.policy(key.appName).deleteWithSession) await memories.deleteBySession(key, key.sessionId);
      return create(DeleteSessionResponseSchema, {});
    },

    async appendEvent(req) {
      const key = sessionKey(req);
      if (!req.event) throw invalid("event is required");
      if (req.expectedRevision !== undefined && req.expectedRevision < 0n) throw invalid("expected_revision must not be negative");
      const event = checkEvent(req.event);
      if (event.partial) {
        // Streaming chunks are never stored (ADK); the caller still learns
        // whether the session exists.
        if ((await store.sessionPk(key)) === undefined) throw notFound(key);
        return create(AppendEventResponseSchema, { event, stored: false });
      }
      // Before anything is stored or streamed: what is never written cannot leak.
      redactors.for(key.appName).redactEvent(event);
      const delta = event.actions?.stateDelta;
      if (event.actions && delta) event.actions.stateDelta = withoutTemp(delta);
      const result = await store.appendEvent({
        key,
        event,
        delta: splitState(delta),
        expectedRevision: req.expectedRevision,
      });
      const rest = create(AppendEventResponseSchema, {
        revision: result.revision,
        lastUpdateTime: nsToTimestamp(result.updateTimeNs),
        stored: true,
        duplicate: result.duplicate,
      });
      // The event as stored, then the other fields: the answer's encoding
      // without encoding the event again.
      const bytes = encodeWithStored(AppendEventResponseSchema, rest, AppendEventResponseSchema.field.event, [result.eventBytes]);
      rest.event = result.event;
      return withEncoding(rest, bytes);
    },

    async listEvents(req) {
      const key = sessionKey(req);
      const limit = pageSize("page_size", req.pageSize);
      if (!(req.order in ListEventsRequest_Order)) throw invalid(`order ${req.order} is not a known value`);
      const descending = req.order === ListEventsRequest_Order.DESCENDING;
      const listing = ["ListEvents", key.appName, key.userId, key.sessionId, descending ? "desc" : "asc"];
      const cursorSeq = req.pageToken
        ? parseBigInt("page_token", decodeToken("page_token", req.pageToken, listing, ["s"] as const).s)
        : undefined;
      const events = await store.listEvents({ key, limit: limit + 1, descending, cursorSeq });
      if (!events) throw notFound(key);
      const page = events.slice(0, limit);
      const last = page[page.length - 1];
      const nextPageToken = events.length > limit && last ? encodeToken(listing, { s: last.event.seq.toString() }) : "";
      const response = create(ListEventsResponseSchema, { nextPageToken });
      // The stored bytes of each event as an `events` field, then the token.
      const bytes = encodeWithStored(
        ListEventsResponseSchema,
        response,
        ListEventsResponseSchema.field.events,
        page.map((e) => e.body),
      );
      response.events = page.map((e) => e.event);
      return withEncoding(response, bytes);
    },

    async getUserState(req) {
      const appName = requireId("app_name", req.appName);
      const userId = requireId("user_id", req.userId);
      return create(GetUserStateResponseSchema, { state: await store.getUserState(appName, userId) });
    },

    streamEvents: streamEventsImpl(store, hub, streams),

    async eraseUserData(req) {
      const appName = requireId("app_name", req.appName);
      const userId = requireId("user_id", req.userId);
      const erased = await store.eraseUser(appName, userId);
      const memoriesDeleted = await memories.eraseUser({ appName, userId });
      return create(EraseUserDataResponseSchema, {
        sessionsDeleted: BigInt(erased.sessions),
        eventsDeleted: erased.events,
        memoriesDeleted: BigInt(memoriesDeleted),
      });
    },

    ...historyHandlers(store),
  };
}

function clampNs(ns: bigint): bigint {
  return ns < MIN_STORED_NS ? MIN_STORED_NS : ns > MAX_STORED_NS ? MAX_STORED_NS : ns;
}

export function sessionKey(req: { appName: string; userId: string; sessionId: string }): SessionKey {
  return {
    appName: requireId("app_name", req.appName),
    userId: requireId("user_id", req.userId),
    sessionId: requireId("session_id", req.sessionId),
  };
}

/** A session as stored, without events (callers add them). */
export function toSession(stored: StoredSession): Session {
  const state: JsonObject = mergeState(stored.sessionState, stored.appState, stored.userState);
  return create(SessionSchema, {
    id: stored.id,
    appName: stored.appName,
    userId: stored.userId,
    state,
    lastUpdateTime: nsToTimestamp(stored.updateTimeNs),
    revision: stored.revision,
    createTime: nsToTimestamp(stored.createTimeNs),
    forkedFrom: stored.forkedFrom,
  });
}
