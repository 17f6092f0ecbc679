import { createHash, randomUUID } from "node:crypto";
import { create, fromBinary, type JsonObject, toBinary } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Content, ContentSchema, type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import {
  AddEventsToMemoryResponseSchema,
  AddMemoriesResponseSchema,
  AddSessionToMemoryResponseSchema,
  DeleteMemoryResponseSchema,
  DeleteSessionMemoriesResponseSchema,
  GetMemoryResponseSchema,
  ListMemoriesResponseSchema,
  type Memory,
  type MemoryFilter,
  MemorySchema,
  type MemoryService,
  SearchMemoryRequest_QueryMode,
  SearchMemoryResponseSchema,
  SearchMemoryResultSchema,
} from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { nowNs, nsToTimestamp, timestampToNs } from "../domain/time.js";
import type { Redactor, RedactorSet } from "../redact/redactor.js";
import type { MemoryFilterQuery, MemoryScope } from "../storage/memory-sql.js";
import { MAX_EMBEDDING_DIMENSIONS, type MemoryStore, type NewMemory, type StoredMemory } from "../storage/memory-store.js";
import { notFound, type SessionStore } from "../storage/session-store.js";
import { checkEvent } from "./event-rules.js";
import { decodeToken, encodeToken, parseBigInt } from "./page-token.js";
import { checkJson, checkStoredTimestamp, checkText, invalid, MAX_NAME_LENGTH, pageSize, requireId } from "./validate.js";

export interface MemoryServiceDeps {
  memories: MemoryStore;
  sessions: SessionStore;
  redactors: RedactorSet;
}

/** Most entries (or events) one request may add. */
export const MAX_MEMORIES_PER_REQUEST = 1000;
const MAX_NAMESPACE_LENGTH = 1024;
const MAX_QUERY_LENGTH = 4096;
const DEFAULT_SEARCH_SIZE = 10;
const MAX_SEARCH_SIZE = 100;
/** Events AddSessionToMemory reads per round trip. */
const INGEST_PAGE = 500;

export function memoryServiceImpl({ memories, sessions, redactors }: MemoryServiceDeps): ServiceImpl<typeof MemoryService> {
  return {
    async addSessionToMemory(req) {
      const scope = memoryScope(req);
      const sessionId = requireId("session_id", req.sessionId);
      const extra = metadata("custom_metadata", req.customMetadata);
      const redactor = redactors.for(scope.appName);
      const key = { ...scope, sessionId };
      // Read from the mark of the last ingestion: a second call adds only
      // what is new, and the unique (session, event) index makes a racing
      // second call add nothing twice.
      let cursorSeq = await memories.ingestedUpTo(scope, sessionId);
      const entries: NewMemory[] = [];
      let eventsRead = 0;
      let lastSeq = cursorSeq;
      for (;;) {
        const page = await sessions.listEvents({ key, limit: INGEST_PAGE, descending: false, cursorSeq });
        if (!page) throw notFound(key);
        for (const { event } of page) {
          eventsRead++;
          lastSeq = event.seq;
          const entry = fromEvent(event, sessionId, extra, redactor);
          if (entry) entries.push(entry);
        }
        if (page.length < INGEST_PAGE) break;
        cursorSeq = lastSeq;
      }
      const added = await memories.put(scope, entries, { sessionId, lastSeq });
      return create(AddSessionToMemoryResponseSchema, { memoriesAdded: BigInt(added.length), eventsRead: BigInt(eventsRead) });
    },

    async addEventsToMemory(req) {
      const scope = memoryScope(req);
      const sessionId = req.sessionId === "" ? "" : requireId("session_id", req.sessionId);
      if (req.events.length > MAX_MEMORIES_PER_REQUEST) {
        throw invalid(`events has ${req.events.length} entries; at most ${MAX_MEMORIES_PER_REQUEST} per request`);
      }
      const extra = metadata("custom_metadata", req.customMetadata);
      const redactor = redactors.for(scope.appName);
      const entries: NewMemory[] = [];
      req.events.forEach((event, i) => {
        try {
          checkEvent(event);
        } catch (err) {
          throw relabel(err, `events[${i}]`);
        }
        // An event without an id is known by its author, time and content
        // (ADK's SqliteMemoryService does the same), so sending it again adds nothing.
        const withId = event.id === "" ? create(EventSchema, { ...event, id: contentId(event) }) : event;
        const entry = fromEvent(withId, sessionId, extra, redactor);
        if (entry) entries.push(entry);
      });
      const added = await memories.put(scope, entries);
      return create(AddEventsToMemoryResponseSchema, { memoriesAdded: BigInt(added.length), memoryIds: added.map((m) => m.id) });
    },

    async addMemories(req) {
      const scope = memoryScope(req);
      if (req.memories.length === 0) throw invalid("memories must not be empty");
      if (req.memories.length > MAX_MEMORIES_PER_REQUEST) {
        throw invalid(`memories has ${req.memories.length} entries; at most ${MAX_MEMORIES_PER_REQUEST} per request`);
      }
      const extra = metadata("custom_metadata", req.customMetadata);
      const redactor = redactors.for(scope.appName);
      const seen = new Set<string>();
      const entries = req.memories.map((m, i) => {
        const entry = explicitEntry(m, `memories[${i}]`, extra, redactor);
        if (seen.has(entry.id)) throw invalid(`memories[${i}].id "${entry.id}" appears twice in this request`);
        seen.add(entry.id);
        return entry;
      });
      const stored = await memories.put(scope, entries);
      return create(AddMemoriesResponseSchema, { memories: stored.map(toMemory) });
    },

    async searchMemory(req) {
      const scope = memoryScope(req);
      checkText("query", req.query, MAX_QUERY_LENGTH);
      if (req.pageSize < 0) throw invalid("page_size must not be negative");
      const limit = req.pageSize === 0 ? DEFAULT_SEARCH_SIZE : Math.min(req.pageSize, MAX_SEARCH_SIZE);
      if (!(req.mode in SearchMemoryRequest_QueryMode)) throw invalid(`mode ${req.mode} is not a known value`);
      const embedding = req.queryEmbedding.length > 0 ? checkEmbedding("query_embedding", req.queryEmbedding) : undefined;
      if (req.query.trim() === "" && !embedding) throw invalid("query must not be empty (or send a query_embedding)");
      const hits = await memories.search({
        scope,
        text: req.query,
        mode: req.mode === SearchMemoryRequest_QueryMode.WEBSEARCH ? "websearch" : "any",
        embedding,
        limit,
        filter: filterQuery(req.filter),
      });
      return create(SearchMemoryResponseSchema, {
        results: hits.map((hit) =>
          create(SearchMemoryResultSchema, {
            memory: toMemory(hit.memory),
            score: hit.score,
            highlight: hit.highlight,
            textScore: hit.textScore,
            vectorDistance: hit.vectorDistance,
          }),
        ),
      });
    },

    async listMemories(req) {
      const scope = memoryScope(req);
      const limit = pageSize("page_size", req.pageSize);
      const filter = filterQuery(req.filter);
      const listing = ["ListMemories", scope.appName, scope.userId, JSON.stringify(filter, (_, v) => (typeof v === "bigint" ? `${v}` : v))];
      const beforePk = req.pageToken
        ? parseBigInt("page_token", decodeToken("page_token", req.pageToken, listing, ["p"] as const).p)
        : undefined;
      const rows = await memories.list(scope, filter, limit + 1, beforePk);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextPageToken = rows.length > limit && last ? encodeToken(listing, { p: last.pk.toString() }) : "";
      return create(ListMemoriesResponseSchema, { memories: page.map((r) => toMemory(r.memory)), nextPageToken });
    },

    async getMemory(req) {
      const scope = memoryScope(req);
      const id = requireId("memory_id", req.memoryId);
      return create(GetMemoryResponseSchema, { memory: toMemory(await memories.get(scope, id)) });
    },

    async deleteMemory(req) {
      const scope = memoryScope(req);
      const id = requireId("memory_id", req.memoryId);
      return create(DeleteMemoryResponseSchema, { deleted: await memories.delete(scope, id) });
    },

    async deleteSessionMemories(req) {
      const scope = memoryScope(req);
      const sessionId = requireId("session_id", req.sessionId);
      return create(DeleteSessionMemoriesResponseSchema, { memoriesDeleted: BigInt(await memories.deleteBySession(scope, sessionId)) });
    },
  };
}

function memoryScope(req: { appName: string; userId: string }): MemoryScope {
  return { appName: requireId("app_name", req.appName), userId: requireId("user_id", req.userId) };
}

function metadata(field: string, value: JsonObject | undefined): JsonObject {
  checkJson(field, value, { forbidNul: true });
  return value ?? {};
}

/** The text search reads: the text parts, one per line, without the model's thoughts (as ADK's SqliteMemoryService). */
export function contentText(content: Content | undefined): string {
  if (!content) return "";
  const texts: string[] = [];
  for (const part of content.parts) {
    if (part.data.case === "text" && !part.thought && part.data.value.trim() !== "") texts.push(part.data.value);
  }
  // The text column cannot hold NUL (events may); the content keeps it.
  return texts.join("\n").replaceAll("\u0000", " ");
}

/**
 * An event with text becomes one entry: its content, author and time, and
 * its session and event ids as provenance (ADK's InMemoryMemoryService keeps
 * the same fields). Events without text are skipped: text is what is
 * searched, and tool calls without words would only crowd results.
 */
function fromEvent(event: Event, sessionId: string, extra: JsonObject, redactor: Redactor): NewMemory | undefined {
  if (event.partial || !event.content || contentText(event.content) === "") return undefined;
  const content = redactContent(event.content, redactor);
  return {
    id: randomUUID(),
    namespace: "",
    author: event.author,
    timestampNs: event.timestamp ? timestampToNs(event.timestamp) : nowNs(),
    sessionId,
    eventId: event.id,
    content: toBinary(ContentSchema, content),
    metadata: redactor.redactJson(extra),
    body: contentText(content),
  };
}

function contentId(event: Event): string {
  const hash = createHash("sha256");
  hash.update(event.author);
  hash.update(event.timestamp ? timestampToNs(event.timestamp).toString() : "");
  hash.update(event.content ? toBinary(ContentSchema, event.content) : new Uint8Array());
  return hash.digest("hex").slice(0, 32);
}

function explicitEntry(m: Memory, at: string, extra: JsonObject, redactor: Redactor): NewMemory {
  const id = m.id === "" ? randomUUID() : requireId(`${at}.id`, m.id);
  if (!m.content || m.content.parts.length === 0) throw invalid(`${at}.content must have at least one part`);
  try {
    checkEvent(create(EventSchema, { author: m.author || "user", content: m.content }));
  } catch (err) {
    throw relabel(err, at);
  }
  checkText(`${at}.author`, m.author, MAX_NAME_LENGTH);
  checkText(`${at}.namespace`, m.namespace, MAX_NAMESPACE_LENGTH);
  if (m.sessionId !== "") requireId(`${at}.session_id`, m.sessionId);
  if (m.eventId !== "") throw invalid(`${at}.event_id is set only for entries made from events (AddEventsToMemory)`);
  if (m.timestamp) checkStoredTimestamp(`${at}.timestamp`, m.timestamp);
  if (m.expireTime) checkStoredTimestamp(`${at}.expire_time`, m.expireTime);
  const own = metadata(`${at}.custom_metadata`, m.customMetadata);
  const embedding = m.embedding.length > 0 ? checkEmbedding(`${at}.embedding`, m.embedding) : undefined;
  const content = redactContent(m.content, redactor);
  return {
    id,
    namespace: m.namespace,
    author: m.author,
    timestampNs: m.timestamp ? timestampToNs(m.timestamp) : nowNs(),
    expireTimeNs: m.expireTime ? timestampToNs(m.expireTime) : undefined,
    sessionId: m.sessionId,
    eventId: "",
    content: toBinary(ContentSchema, content),
    metadata: redactor.redactJson({ ...extra, ...own }),
    body: contentText(content),
    embedding,
  };
}

/** The event redactor walks Content as it does inside an event. */
function redactContent(content: Content, redactor: Redactor): Content {
  const event = create(EventSchema, { content: create(ContentSchema, content) });
  redactor.redactEvent(event);
  return event.content as Content;
}

function checkEmbedding(field: string, values: number[]): number[] {
  if (values.length > MAX_EMBEDDING_DIMENSIONS) {
    throw invalid(`${field} has ${values.length} dimensions; at most ${MAX_EMBEDDING_DIMENSIONS}`);
  }
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) throw invalid(`${field}[${i}] is ${v}; only finite numbers`);
  });
  if (values.every((v) => v === 0)) throw invalid(`${field} is all zeros, which has no direction to compare`);
  return values;
}

function filterQuery(f: MemoryFilter | undefined): MemoryFilterQuery {
  if (!f) return {};
  for (const [i, a] of f.authors.entries()) checkText(`filter.authors[${i}]`, a, MAX_NAME_LENGTH);
  for (const [i, s] of f.sessionIds.entries()) requireId(`filter.session_ids[${i}]`, s);
  checkText("filter.namespace_prefix", f.namespacePrefix, MAX_NAMESPACE_LENGTH);
  checkJson("filter.metadata", f.metadata, { forbidNul: true });
  if (f.startTime) checkStoredTimestamp("filter.start_time", f.startTime);
  if (f.endTime) checkStoredTimestamp("filter.end_time", f.endTime);
  return {
    authors: f.authors,
    sessionIds: f.sessionIds,
    namespacePrefix: f.namespacePrefix,
    metadata: f.metadata,
    startNs: f.startTime ? timestampToNs(f.startTime) : undefined,
    endNs: f.endTime ? timestampToNs(f.endTime) : undefined,
  };
}

/** An event-rules message for `event` re-addressed to the request field that held it. */
function relabel(err: unknown, at: string): unknown {
  if (err instanceof Error && "rawMessage" in err && typeof err.rawMessage === "string") {
    return invalid(err.rawMessage.replace(/^event\b/, at));
  }
  return err;
}

export function toMemory(m: StoredMemory): Memory {
  return create(MemorySchema, {
    id: m.id,
    appName: m.appName,
    userId: m.userId,
    content: fromBinary(ContentSchema, m.content),
    author: m.author,
    timestamp: nsToTimestamp(m.timestampNs),
    customMetadata: m.metadata,
    sessionId: m.sessionId,
    eventId: m.eventId,
    namespace: m.namespace,
    createTime: nsToTimestamp(m.createTimeNs),
    expireTime: m.expireTimeNs === undefined ? undefined : nsToTimestamp(m.expireTimeNs),
    hasEmbedding: m.hasEmbedding,
  });
}
