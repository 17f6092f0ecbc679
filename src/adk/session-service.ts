// GrpcSessionService: adk-js's BaseSessionService backed by a Sessionstore
// server, with the behaviour of adk-js's own DatabaseSessionService.
//
//   import { GrpcSessionService } from "sessionstore/adk";
//   const sessionService = new GrpcSessionService("http://127.0.0.1:50051"); // was new DatabaseSessionService(url)

import { type JsonObject, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Event as AdkEvent,
  type Session as AdkSession,
  type AppendEventRequest,
  BaseSessionService,
  type CreateSessionRequest,
  createSession,
  type DeleteSessionRequest,
  type GetSessionRequest,
  type ListSessionsRequest,
  type ListSessionsResponse,
  trimTempDeltaState,
} from "@google/adk";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import type { Session as StoredSession } from "../../gen/ts/sessionstore/v1/session_pb.js";
import { type ClientOptions, createSessionStoreClient, type SessionStoreClient } from "../client/create-client.js";
import { eventFromProto, eventToProto, jsonForm, millisFromTimestamp, timestampFromMillis } from "./event-convert.js";

const LIST_PAGE_SIZE = 1000;

export interface GrpcSessionServiceOptions extends ClientOptions {
  /** An existing client to use instead of one made from the URL. */
  client?: SessionStoreClient;
}

/**
 * Stores adk-js sessions in Sessionstore.
 *
 * Each session object this service returns is remembered with the storage
 * revision it was read at. An append through a session whose copy is behind
 * storage is still stored (as adk-js's DatabaseSessionService does), and the
 * session object is then reloaded from storage, so it holds every stored
 * event and the stored state afterwards.
 */
export class GrpcSessionService extends BaseSessionService {
  readonly client: SessionStoreClient;
  readonly #revisions = new WeakMap<AdkSession, bigint>();

  constructor(baseUrlOrClient: string | SessionStoreClient, options: ClientOptions = {}) {
    super();
    this.client = typeof baseUrlOrClient === "string" ? createSessionStoreClient(baseUrlOrClient, options) : baseUrlOrClient;
  }

  override async createSession({ appName, userId, state, sessionId }: CreateSessionRequest): Promise<AdkSession> {
    try {
      const res = await this.client.createSession({
        appName,
        userId,
        // Unset or empty: the server generates a UUID, as adk-js does.
        sessionId: sessionId || undefined,
        state: state ? (jsonForm(state) as JsonObject) : undefined,
      });
      return this.#toSession(stored(res.session));
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.AlreadyExists) {
        throw new Error(`Session with id ${sessionId} already exists.`, { cause: e });
      }
      throw asAdkError(e);
    }
  }

  override async getSession({ appName, userId, sessionId, config }: GetSessionRequest): Promise<AdkSession | undefined> {
    try {
      const res = await this.client.getSession({
        appName,
        userId,
        sessionId,
        // As adk-js's DatabaseSessionService: numRecentEvents is a LIMIT (0:
        // no events), and the time filter is exclusive, events strictly after
        // it, and off when 0. The store keeps nanoseconds, so "after t" is
        // "at or after t + 1 ns".
        numRecentEvents: config?.numRecentEvents,
        afterTimestamp: config?.afterTimestamp ? afterMillis(config.afterTimestamp) : undefined,
      });
      return this.#toSession(stored(res.session));
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
      throw asAdkError(e);
    }
  }

  override async listSessions({ appName, userId, limit, offset, page, order }: ListSessionsRequest): Promise<ListSessionsResponse> {
    // The store pages by cursor in last-update order; adk-js pages by offset
    // and counts the total, so the listing is read whole and cut here.
    const all: StoredSession[] = [];
    let pageToken = "";
    try {
      do {
        const res = await this.client.listSessions({ appName, userId: userId ?? "", pageSize: LIST_PAGE_SIZE, pageToken });
        all.push(...res.sessions);
        pageToken = res.nextPageToken;
      } while (pageToken !== "");
    } catch (e) {
      throw asAdkError(e);
    }
    if (order === "desc") {
      all.sort((a, b) => compareTime(b, a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
    const totalItems = all.length;
    const toSessions = (list: StoredSession[]) => list.map((s) => this.#toSession(s));
    if (limit !== undefined) {
      const start = page !== undefined ? (page - 1) * limit : (offset ?? 0);
      return {
        sessions: toSessions(all.slice(start, start + limit)),
        page: page ?? (limit === 0 ? 1 : Math.floor(start / limit) + 1),
        limit,
        totalItems,
        totalPages: limit === 0 ? 0 : Math.ceil(totalItems / limit),
      };
    }
    return {
      sessions: toSessions(offset ? all.slice(offset) : all),
      page: 1,
      limit: totalItems,
      totalItems,
      totalPages: totalItems === 0 ? 0 : 1,
    };
  }

  override async deleteSession({ appName, userId, sessionId }: DeleteSessionRequest): Promise<void> {
    try {
      await this.client.deleteSession({ appName, userId, sessionId });
    } catch (e) {
      throw asAdkError(e);
    }
  }

  override async appendEvent({ session, event }: AppendEventRequest): Promise<AdkEvent> {
    if (event.partial) return event;
    const trimmed = trimTempDeltaState(event);
    const known = this.#revisions.get(session);
    const sent = eventToProto(trimmed, { dropTemp: true });
    let res: Awaited<ReturnType<SessionStoreClient["appendEvent"]>>;
    try {
      res = await this.client.appendEvent({ appName: session.appName, userId: session.userId, sessionId: session.id, event: sent });
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.NotFound) {
        throw new Error(`Session ${session.id} not found for appendEvent`, { cause: e });
      }
      throw asAdkError(e);
    }
    if (res.duplicate) {
      // A retry of an append that already went through (the store is
      // idempotent on event.id). adk-js's database would overwrite the
      // stored event; an append-only log refuses a different one instead.
      const was = res.event ? toJson(EventSchema, { ...res.event, seq: 0n }) : undefined;
      if (JSON.stringify(was) !== JSON.stringify(toJson(EventSchema, sent))) {
        throw new Error(`Event ${event.id} already exists in session ${session.id} with different content.`);
      }
      return event;
    }
    if (known !== undefined && res.revision === known + 1n) {
      await super.appendEvent({ session, event: trimmed });
    } else {
      // Storage moved since this copy was read (or the copy is not ours):
      // like adk-js's DatabaseSessionService, take storage's events and
      // state, with this event object in its stored place.
      const fresh = await this.getSession({ appName: session.appName, userId: session.userId, sessionId: session.id });
      if (!fresh) throw new Error(`Session ${session.id} not found for appendEvent`);
      session.state = fresh.state;
      session.events = fresh.events.map((e) => (e.id === trimmed.id ? trimmed : e));
    }
    if (res.lastUpdateTime) session.lastUpdateTime = millisFromTimestamp(res.lastUpdateTime);
    this.#revisions.set(session, res.revision);
    return trimmed;
  }

  #toSession(s: StoredSession): AdkSession {
    const session = createSession({
      id: s.id,
      appName: s.appName,
      userId: s.userId,
      state: { ...(s.state ?? {}) },
      events: s.events.map((e) => eventFromProto(e) as unknown as AdkEvent),
      lastUpdateTime: s.lastUpdateTime ? millisFromTimestamp(s.lastUpdateTime) : 0,
    });
    this.#revisions.set(session, s.revision);
    return session;
  }
}

function stored(session: StoredSession | undefined): StoredSession {
  if (!session) throw new Error("the server answered without a session");
  return session;
}

function afterMillis(ms: number) {
  const ts = timestampFromMillis(ms);
  return ts.nanos === 999_999_999 ? { ...ts, seconds: ts.seconds + 1n, nanos: 0 } : { ...ts, nanos: ts.nanos + 1 };
}

function compareTime(a: StoredSession, b: StoredSession): number {
  const ns = (s: StoredSession) => (s.lastUpdateTime ? s.lastUpdateTime.seconds * 1_000_000_000n + BigInt(s.lastUpdateTime.nanos) : 0n);
  const d = ns(a) - ns(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** Bad input is an Error with the server's message, as adk-js's own services throw plain Errors. */
function asAdkError(e: unknown): unknown {
  if (e instanceof ConnectError && e.code === Code.InvalidArgument) return new Error(e.rawMessage, { cause: e });
  return e;
}
