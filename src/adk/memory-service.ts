// GrpcMemoryService: adk-js's BaseMemoryService backed by a Sessionstore
// server's MemoryService, searched with PostgreSQL full-text search.
//
//   import { GrpcMemoryService } from "sessionstore/adk";
//   const memoryService = new GrpcMemoryService("http://127.0.0.1:50051"); // was new InMemoryMemoryService()
//   const runner = new Runner({ appName, agent, sessionService, memoryService });

import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Session as AdkSession, BaseMemoryService, MemoryEntry, SearchMemoryRequest, SearchMemoryResponse } from "@google/adk";
import type { Memory } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { type ClientOptions, createMemoryClient, type MemoryClient } from "../client/create-client.js";
import { contentFromProto, eventToProto, jsonForm, millisFromTimestamp } from "./event-convert.js";

/** The server's cap on events per AddEventsToMemory request. */
const BATCH = 1000;

export interface GrpcMemoryServiceOptions extends ClientOptions {
  /** How many entries a search answers at most (1 to 100; default 10). */
  maxResults?: number;
}

/**
 * Keeps adk-js memories in Sessionstore.
 *
 * As adk-js's InMemoryMemoryService: every event of a session with content
 * becomes searchable, a search answers entries with the event's content,
 * author and time (ISO 8601), and entries are scoped by (app, user), so a
 * search never answers another user's memories. Unlike it, adding a session
 * again adds only events not added before (the server keeps the events'
 * ids), and a search ranks entries by relevance and answers the best
 * `maxResults`.
 */
export class GrpcMemoryService implements BaseMemoryService {
  readonly client: MemoryClient;
  readonly maxResults: number;

  constructor(baseUrlOrClient: string | MemoryClient, options: GrpcMemoryServiceOptions = {}) {
    const { maxResults = 10, ...clientOptions } = options;
    if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > 100) {
      throw new Error(`maxResults must be an integer from 1 to 100, got ${maxResults}`);
    }
    this.maxResults = maxResults;
    this.client = typeof baseUrlOrClient === "string" ? createMemoryClient(baseUrlOrClient, clientOptions) : baseUrlOrClient;
  }

  async addSessionToMemory(session: AdkSession): Promise<void> {
    // A session stored in Sessionstore is read by the server from where the
    // last call stopped; one kept by another session service is sent.
    try {
      await this.client.addSessionToMemory({ appName: session.appName, userId: session.userId, sessionId: session.id });
      return;
    } catch (e) {
      if (!(e instanceof ConnectError && e.code === Code.NotFound)) throw asAdkError(e);
    }
    await this.addEventsToMemory({ appName: session.appName, userId: session.userId, sessionId: session.id, events: session.events });
  }

  /**
   * Adds events (e.g. one turn's) to memory, attributed to a session when
   * given. Events without content and partial events are skipped; re-adding
   * an event of the same session adds nothing.
   */
  async addEventsToMemory(request: {
    appName: string;
    userId: string;
    events: readonly AdkSession["events"][number][];
    sessionId?: string;
    customMetadata?: Record<string, unknown>;
  }): Promise<void> {
    const events = request.events
      .filter((e) => !e.partial && (e.content?.parts?.length ?? 0) > 0)
      .map((e) => eventToProto(e, { dropTemp: true }));
    const customMetadata = request.customMetadata ? (jsonForm(request.customMetadata) as JsonObject) : undefined;
    for (let start = 0; start < events.length; start += BATCH) {
      try {
        await this.client.addEventsToMemory({
          appName: request.appName,
          userId: request.userId,
          sessionId: request.sessionId ?? "",
          events: events.slice(start, start + BATCH),
          customMetadata,
        });
      } catch (e) {
        throw asAdkError(e);
      }
    }
  }

  async searchMemory({ appName, userId, query }: SearchMemoryRequest): Promise<SearchMemoryResponse> {
    // adk-js's InMemoryMemoryService matches nothing for a query without words.
    if (!query.trim()) return { memories: [] };
    try {
      const res = await this.client.searchMemory({ appName, userId, query, pageSize: this.maxResults });
      return { memories: res.results.flatMap((r) => (r.memory ? [memoryEntry(r.memory)] : [])) };
    } catch (e) {
      throw asAdkError(e);
    }
  }

  /** Deletes every memory made from one session; answers how many. */
  async deleteSessionMemories({ appName, userId, sessionId }: { appName: string; userId: string; sessionId: string }): Promise<number> {
    try {
      const res = await this.client.deleteSessionMemories({ appName, userId, sessionId });
      return Number(res.memoriesDeleted);
    } catch (e) {
      throw asAdkError(e);
    }
  }
}

/** adk-js's MemoryEntry: what its InMemoryMemoryService answers for an event. */
function memoryEntry(m: Memory): MemoryEntry {
  const entry: MemoryEntry = { content: (m.content ? contentFromProto(m.content) : { parts: [] }) as MemoryEntry["content"] };
  if (m.author !== "") entry.author = m.author;
  if (m.timestamp) entry.timestamp = new Date(millisFromTimestamp(m.timestamp)).toISOString();
  return entry;
}

/** Bad input is an Error with the server's message, as adk-js's own services throw plain Errors. */
function asAdkError(e: unknown): unknown {
  if (e instanceof ConnectError && e.code === Code.InvalidArgument) return new Error(e.rawMessage, { cause: e });
  return e;
}
