import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type ChannelValue,
  type Checkpoint,
  CheckpointSchema,
  type CheckpointService,
  CopyThreadResponseSchema,
  DeleteRunsResponseSchema,
  DeleteThreadResponseSchema,
  GetCheckpointResponseSchema,
  ListCheckpointsResponseSchema,
  PruneThreadsRequest_Strategy,
  PruneThreadsResponseSchema,
  PutCheckpointResponseSchema,
  PutWritesResponseSchema,
  type TypedValue,
} from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { NotFound } from "../domain/outcomes.js";
import { nsToTimestamp } from "../domain/time.js";
import type { CheckpointStore, StoredCheckpoint, StoredValue, ThreadKey, TypedBytes } from "../storage/checkpoint-store.js";
import { decodeToken, encodeToken } from "./page-token.js";
import { checkText, invalid, MAX_BRANCH_LENGTH, MAX_ID_LENGTH, pageSize, requireId } from "./validate.js";

// Checkpoints are stored as the client's serializer wrote them: the server
// checks ids, names and JSON, never the typed bytes, and does not redact them
// (see SECURITY.md, "LangGraph checkpoints").

const MAX_TYPE_LENGTH = 128;
const MAX_CHANNEL_LENGTH = 1024;
const MAX_RUN_IDS = 1000;

export function checkpointServiceImpl(store: CheckpointStore): ServiceImpl<typeof CheckpointService> {
  return {
    async putCheckpoint(req) {
      const key = threadKey(req);
      const checkpointNs = namespace("checkpoint_ns", req.checkpointNs);
      const checkpointId = requireId("checkpoint_id", req.checkpointId);
      const parentCheckpointId = checkText("parent_checkpoint_id", req.parentCheckpointId, MAX_ID_LENGTH);
      const channelVersions = versions(req.channelVersions);
      const newValues = req.newValues.map((v, i) => value(`new_values[${i}]`, v, channelVersions));
      await store.putCheckpoint({
        key,
        checkpointNs,
        checkpointId,
        parentCheckpointId,
        body: typed("body", req.body),
        channelVersions,
        metadata: typed("metadata", req.metadata),
        metadataJson: jsonObject("metadata_json", req.metadataJson),
        newValues,
      });
      return create(PutCheckpointResponseSchema, {});
    },

    async putWrites(req) {
      const key = threadKey(req);
      const checkpointNs = namespace("checkpoint_ns", req.checkpointNs);
      const checkpointId = requireId("checkpoint_id", req.checkpointId);
      const taskId = requireId("task_id", req.taskId);
      const taskPath = checkText("task_path", req.taskPath, MAX_BRANCH_LENGTH);
      const seen = new Set<number>();
      const writes = req.writes.map((w, i) => {
        if (seen.has(w.idx)) throw invalid(`writes[${i}].idx ${w.idx} appears twice`);
        seen.add(w.idx);
        return {
          taskId,
          taskPath,
          idx: w.idx,
          channel: channel(`writes[${i}].channel`, w.channel),
          value: typed(`writes[${i}].value`, w.value),
        };
      });
      await store.putWrites({ key, checkpointNs, checkpointId, writes, replace: req.replace });
      return create(PutWritesResponseSchema, {});
    },

    async getCheckpoint(req) {
      const key = threadKey(req);
      const checkpointNs = namespace("checkpoint_ns", req.checkpointNs);
      const checkpointId = req.checkpointId === "" ? undefined : requireId("checkpoint_id", req.checkpointId);
      const found = await store.getCheckpoint(key, checkpointNs, checkpointId);
      if (!found) {
        const which = checkpointId === undefined ? "no checkpoint" : `checkpoint "${checkpointId}" not found`;
        throw new NotFound(
          `${which} in namespace "${checkpointNs}" of thread "${key.threadId}" for app "${key.appName}" and user "${key.userId}"`,
        );
      }
      return create(GetCheckpointResponseSchema, { checkpoint: toCheckpoint(found) });
    },

    async listCheckpoints(req) {
      const appName = requireId("app_name", req.appName);
      const userId = requireId("user_id", req.userId);
      const threadId = req.threadId === "" ? undefined : requireId("thread_id", req.threadId);
      const checkpointNs = req.checkpointNs === undefined ? undefined : namespace("checkpoint_ns", req.checkpointNs);
      const checkpointId = req.checkpointId === "" ? undefined : requireId("checkpoint_id", req.checkpointId);
      const filterJson = req.filterJson === "" ? undefined : jsonObject("filter_json", req.filterJson);
      const beforeCheckpointId = req.beforeCheckpointId === "" ? undefined : requireId("before_checkpoint_id", req.beforeCheckpointId);
      const limit = pageSize("page_size", req.pageSize);
      const listing = [
        "ListCheckpoints",
        appName,
        userId,
        threadId ?? "",
        checkpointNs ?? "\u0000",
        checkpointId ?? "",
        filterJson ?? "",
        beforeCheckpointId ?? "",
      ];
      const after = req.pageToken ? decodeToken("page_token", req.pageToken, listing, ["c", "t", "n"] as const) : undefined;
      const rows = await store.listCheckpoints({
        appName,
        userId,
        threadId,
        checkpointNs,
        checkpointId,
        filterJson,
        beforeCheckpointId,
        limit: limit + 1,
        after: after && { checkpointId: after.c, threadId: after.t, checkpointNs: after.n },
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextPageToken =
        rows.length > limit && last ? encodeToken(listing, { c: last.checkpointId, t: last.threadId, n: last.checkpointNs }) : "";
      return create(ListCheckpointsResponseSchema, { checkpoints: page.map(toCheckpoint), nextPageToken });
    },

    async deleteThread(req) {
      await store.deleteThread(threadKey(req));
      return create(DeleteThreadResponseSchema, {});
    },

    async copyThread(req) {
      const source = threadKey({ appName: req.appName, userId: req.userId, threadId: req.sourceThreadId }, "source_thread_id");
      const target = requireId("target_thread_id", req.targetThreadId);
      const copied = await store.copyThread(source, target);
      return create(CopyThreadResponseSchema, { checkpointsCopied: BigInt(copied) });
    },

    async deleteRuns(req) {
      const appName = requireId("app_name", req.appName);
      const userId = requireId("user_id", req.userId);
      if (req.runIds.length > MAX_RUN_IDS) throw invalid(`run_ids has ${req.runIds.length} entries; the limit is ${MAX_RUN_IDS}`);
      const runIds = req.runIds.map((r, i) => requireId(`run_ids[${i}]`, r));
      const deleted = await store.deleteRuns(appName, userId, runIds);
      return create(DeleteRunsResponseSchema, { checkpointsDeleted: BigInt(deleted) });
    },

    async pruneThreads(req) {
      const appName = requireId("app_name", req.appName);
      const userId = requireId("user_id", req.userId);
      if (req.threadIds.length > MAX_RUN_IDS) throw invalid(`thread_ids has ${req.threadIds.length} entries; the limit is ${MAX_RUN_IDS}`);
      const threadIds = req.threadIds.map((t, i) => requireId(`thread_ids[${i}]`, t));
      let strategy: "keep_latest" | "delete";
      if (req.strategy === PruneThreadsRequest_Strategy.KEEP_LATEST) strategy = "keep_latest";
      else if (req.strategy === PruneThreadsRequest_Strategy.DELETE) strategy = "delete";
      else throw invalid("strategy must be STRATEGY_KEEP_LATEST or STRATEGY_DELETE");
      const deleted = await store.pruneThreads(appName, userId, threadIds, strategy);
      return create(PruneThreadsResponseSchema, { checkpointsDeleted: BigInt(deleted) });
    },
  };
}

function threadKey(req: { appName: string; userId: string; threadId: string }, threadField = "thread_id"): ThreadKey {
  return {
    appName: requireId("app_name", req.appName),
    userId: requireId("user_id", req.userId),
    threadId: requireId(threadField, req.threadId),
  };
}

/** A checkpoint namespace: may be empty (the root graph). */
function namespace(field: string, value: string): string {
  return checkText(field, value, MAX_BRANCH_LENGTH);
}

function channel(field: string, value: string): string {
  if (value === "") throw invalid(`${field} must not be empty`);
  return checkText(field, value, MAX_CHANNEL_LENGTH);
}

function typed(field: string, value: TypedValue | undefined): TypedBytes {
  if (!value) throw invalid(`${field} is required`);
  if (value.type === "") throw invalid(`${field}.type must not be empty`);
  checkText(`${field}.type`, value.type, MAX_TYPE_LENGTH);
  return { type: value.type, data: value.data };
}

function versions(map: Record<string, string>): Record<string, string> {
  for (const [name, version] of Object.entries(map)) {
    channel("channel_versions key", name);
    if (version === "") throw invalid(`channel_versions["${name.slice(0, 64)}"] must not be empty`);
    checkText(`channel_versions["${name.slice(0, 64)}"]`, version, MAX_ID_LENGTH);
  }
  return map;
}

function value(field: string, v: ChannelValue, channelVersions: Record<string, string>): StoredValue {
  const name = channel(`${field}.channel`, v.channel);
  // A value is stored under the version the checkpoint names, or it could
  // never be read back.
  if (channelVersions[name] !== v.version) {
    throw invalid(`${field}: version "${v.version.slice(0, 64)}" of channel "${name.slice(0, 64)}" is not the one in channel_versions`);
  }
  return { channel: name, version: v.version, value: v.value ? typed(`${field}.value`, v.value) : undefined };
}

function jsonObject(field: string, text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(`${field} is not valid JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw invalid(`${field} must be a JSON object`);
  // PostgreSQL's jsonb cannot hold U+0000.
  if (text.includes("\\u0000")) throw invalid(`${field} must not contain U+0000`);
  return text;
}

function toCheckpoint(cp: StoredCheckpoint): Checkpoint {
  return create(CheckpointSchema, {
    threadId: cp.threadId,
    checkpointNs: cp.checkpointNs,
    checkpointId: cp.checkpointId,
    parentCheckpointId: cp.parentCheckpointId,
    body: cp.body,
    channelVersions: cp.channelVersions,
    metadata: cp.metadata,
    metadataJson: cp.metadataJson,
    channelValues: cp.values.map((v) => ({ channel: v.channel, version: v.version, value: v.value })),
    pendingWrites: cp.writes.map((w) => ({ taskId: w.taskId, channel: w.channel, value: w.value, taskPath: w.taskPath, idx: w.idx })),
    createTime: nsToTimestamp(cp.createTimeNs),
  });
}
