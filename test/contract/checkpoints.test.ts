import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { expect, it } from "vitest";
import {
  type Checkpoint,
  CheckpointService,
  PruneThreadsRequest_Strategy,
  type PutCheckpointRequest,
  type PutCheckpointRequestSchema,
} from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { describeContract, expectCode } from "../support/contract.js";
import { unique } from "../support/ids.js";
import type { TestServer } from "../support/server.js";

// The CheckpointService as a client sees it; LangGraph's own conformance
// suite runs against it from clients/python.

const bytes = (s: string) => new TextEncoder().encode(s);
const typed = (s: string) => ({ type: "json", data: bytes(s) });
const text = (v: { data: Uint8Array } | undefined) => (v ? new TextDecoder().decode(v.data) : undefined);

/** The plain-object form of a request (not a built message). */
type PutInit = Exclude<MessageInitShape<typeof PutCheckpointRequestSchema>, PutCheckpointRequest>;

function put(t: TestServer, init: PutInit & { appName: string; threadId: string; checkpointId: string }) {
  return t.clientFor(CheckpointService).putCheckpoint({
    userId: "u1",
    checkpointNs: "",
    body: typed(`{"id":"${init.checkpointId}"}`),
    metadata: typed("{}"),
    metadataJson: "{}",
    ...init,
  });
}

const values = (cp: Checkpoint | undefined) => Object.fromEntries((cp?.channelValues ?? []).map((v) => [v.channel, text(v.value) ?? null]));

async function rowCount(t: TestServer, table: "checkpoints" | "checkpoint_values" | "checkpoint_writes", appName: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*)::text AS n FROM ${sql.table(table)} x JOIN checkpoint_threads t ON t.pk = x.thread_pk WHERE t.app_name = ${appName}`.execute(
    t.database.db,
  );
  return Number(rows[0]?.n);
}

describeContract("CheckpointService", (t) => {
  const cs = () => t().clientFor(CheckpointService);

  it("stores each channel value once per version and assembles a checkpoint from what its versions name", async () => {
    const appName = unique("app");
    const threadId = "t1";
    await put(t(), {
      appName,
      threadId,
      checkpointId: "1",
      channelVersions: { a: "1", b: "1" },
      newValues: [
        { channel: "a", version: "1", value: typed('"a1"') },
        { channel: "b", version: "1", value: typed('"b1"') },
      ],
    });
    // Only "a" changed; "c" has a version but no value.
    await put(t(), {
      appName,
      threadId,
      checkpointId: "2",
      parentCheckpointId: "1",
      channelVersions: { a: "2", b: "1", c: "1" },
      newValues: [
        { channel: "a", version: "2", value: typed('"a2"') },
        { channel: "c", version: "1" },
      ],
      metadata: typed('{"step":1}'),
      metadataJson: '{"step":1,"source":"loop"}',
    });
    expect(await rowCount(t(), "checkpoint_values", appName)).toBe(4);

    const latest = (await cs().getCheckpoint({ appName, userId: "u1", threadId })).checkpoint;
    expect(latest?.checkpointId).toBe("2");
    expect(latest?.parentCheckpointId).toBe("1");
    expect(values(latest)).toEqual({ a: '"a2"', b: '"b1"', c: null });
    expect(text(latest?.metadata)).toBe('{"step":1}');
    expect(JSON.parse(latest?.metadataJson ?? "")).toEqual({ step: 1, source: "loop" });
    const first = (await cs().getCheckpoint({ appName, userId: "u1", threadId, checkpointId: "1" })).checkpoint;
    expect(values(first)).toEqual({ a: '"a1"', b: '"b1"' });
    expect(first?.parentCheckpointId).toBe("");
  });

  it("scopes threads by app and user, and reads a missing checkpoint as NOT_FOUND", async () => {
    const appName = unique("app");
    await put(t(), { appName, threadId: "shared-id", checkpointId: "1" });
    await expectCode(cs().getCheckpoint({ appName, userId: "u2", threadId: "shared-id" }), Code.NotFound);
    await expectCode(cs().getCheckpoint({ appName: unique("app"), userId: "u1", threadId: "shared-id" }), Code.NotFound);
    await expectCode(cs().getCheckpoint({ appName, userId: "u1", threadId: "shared-id", checkpointId: "9" }), Code.NotFound);
    expect((await cs().listCheckpoints({ appName, userId: "u2" })).checkpoints).toEqual([]);
    // Deleting, copying or pruning as another user touches nothing.
    await cs().deleteThread({ appName, userId: "u2", threadId: "shared-id" });
    await cs().pruneThreads({ appName, userId: "u2", threadIds: ["shared-id"], strategy: PruneThreadsRequest_Strategy.DELETE });
    expect((await cs().copyThread({ appName, userId: "u2", sourceThreadId: "shared-id", targetThreadId: "x" })).checkpointsCopied).toBe(0n);
    expect((await cs().getCheckpoint({ appName, userId: "u1", threadId: "shared-id" })).checkpoint?.checkpointId).toBe("1");
  });

  it("lists newest first across threads and namespaces, by metadata filter and before, page by page", async () => {
    const appName = unique("app");
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const checkpointId = `c${String(i).padStart(2, "0")}`;
      ids.push(checkpointId);
      await put(t(), {
        appName,
        threadId: i % 2 ? "odd" : "even",
        checkpointNs: i === 6 ? "child:1" : "",
        checkpointId,
        metadataJson: JSON.stringify({ step: i, source: i % 3 === 0 ? "input" : "loop", run_id: `r${i % 2}` }),
      });
    }
    const listAll = async (req: Record<string, unknown>) => {
      const out: string[] = [];
      let pageToken = "";
      do {
        const res = await cs().listCheckpoints({ appName, userId: "u1", pageSize: 2, ...req, pageToken });
        out.push(...res.checkpoints.map((c) => c.checkpointId));
        pageToken = res.nextPageToken;
      } while (pageToken);
      return out;
    };
    expect(await listAll({})).toEqual([...ids].reverse());
    expect(await listAll({ threadId: "even" })).toEqual(["c06", "c04", "c02", "c00"]);
    expect(await listAll({ threadId: "even", checkpointNs: "" })).toEqual(["c04", "c02", "c00"]);
    expect(await listAll({ filterJson: '{"source":"input"}' })).toEqual(["c06", "c03", "c00"]);
    expect(await listAll({ filterJson: '{"source":"input","step":3}' })).toEqual(["c03"]);
    expect(await listAll({ beforeCheckpointId: "c03" })).toEqual(["c02", "c01", "c00"]);
    expect(await listAll({ checkpointId: "c05" })).toEqual(["c05"]);
    const first = await cs().listCheckpoints({ appName, userId: "u1", pageSize: 2 });
    await expectCode(
      cs().listCheckpoints({ appName, userId: "u1", threadId: "odd", pageToken: first.nextPageToken }),
      Code.InvalidArgument,
    );
  });

  it("orders pending writes by task path, task id and index; special writes replace, regular ones keep the first copy", async () => {
    const appName = unique("app");
    const key = { appName, userId: "u1", threadId: "t", checkpointNs: "", checkpointId: "1" };
    await put(t(), key);
    const w = (channel: string, value: string, idx: number) => ({ channel, value: typed(value), idx });
    await cs().putWrites({ ...key, taskId: "b", taskPath: "~1", writes: [w("x", "1", 0), w("y", "2", 1)] });
    await cs().putWrites({ ...key, taskId: "a", taskPath: "~2", writes: [w("x", "3", 0)] });
    await cs().putWrites({ ...key, taskId: "z", taskPath: "~0", writes: [w("x", "4", 0)] });
    await cs().putWrites({ ...key, taskId: "b", taskPath: "~1", writes: [w("x", "changed", 0)] });
    await cs().putWrites({ ...key, taskId: "b", taskPath: "~1", writes: [w("__error__", '"e1"', -1)], replace: true });
    await cs().putWrites({ ...key, taskId: "b", taskPath: "~1", writes: [w("__error__", '"e2"', -1)], replace: true });
    const got = (await cs().getCheckpoint(key)).checkpoint?.pendingWrites.map((p) => [p.taskId, p.channel, text(p.value), p.idx]);
    expect(got).toEqual([
      ["z", "x", "4", 0],
      ["b", "__error__", '"e2"', -1],
      ["b", "x", "1", 0],
      ["b", "y", "2", 1],
      ["a", "x", "3", 0],
    ]);
  });

  it("copies a thread whole, deletes runs with the values only they used, prunes to the latest checkpoint", async () => {
    const appName = unique("app");
    const base = { appName, threadId: "src" };
    await put(t(), {
      ...base,
      checkpointId: "1",
      channelVersions: { a: "1" },
      newValues: [{ channel: "a", version: "1", value: typed("1") }],
      metadataJson: '{"run_id":"r1"}',
    });
    await put(t(), {
      ...base,
      checkpointId: "2",
      parentCheckpointId: "1",
      channelVersions: { a: "2" },
      newValues: [{ channel: "a", version: "2", value: typed("2") }],
      metadataJson: '{"run_id":"r2"}',
    });
    await put(t(), { ...base, checkpointId: "3", parentCheckpointId: "2", channelVersions: { a: "2" }, metadataJson: '{"run_id":"r2"}' });
    await cs().putWrites({
      appName,
      userId: "u1",
      threadId: "src",
      checkpointNs: "",
      checkpointId: "1",
      taskId: "t",
      writes: [{ channel: "x", value: typed("w"), idx: 0 }],
    });

    expect((await cs().copyThread({ appName, userId: "u1", sourceThreadId: "src", targetThreadId: "dst" })).checkpointsCopied).toBe(3n);
    const copied = await cs().listCheckpoints({ appName, userId: "u1", threadId: "dst" });
    expect(copied.checkpoints.map((c) => [c.threadId, c.checkpointId, values(c).a, c.pendingWrites.length])).toEqual([
      ["dst", "3", "2", 0],
      ["dst", "2", "2", 0],
      ["dst", "1", "1", 1],
    ]);
    await expectCode(cs().copyThread({ appName, userId: "u1", sourceThreadId: "src", targetThreadId: "src" }), Code.InvalidArgument);

    // Run r1 in both threads: its checkpoint, its write and value a@1 go.
    expect((await cs().deleteRuns({ appName, userId: "u1", runIds: ["r1"] })).checkpointsDeleted).toBe(2n);
    expect(await rowCount(t(), "checkpoint_writes", appName)).toBe(0);
    expect(await rowCount(t(), "checkpoint_values", appName)).toBe(2);

    // keep_latest: "3" stays, without its parent, with the value it names.
    expect(
      (await cs().pruneThreads({ appName, userId: "u1", threadIds: ["src"], strategy: PruneThreadsRequest_Strategy.KEEP_LATEST }))
        .checkpointsDeleted,
    ).toBe(1n);
    const left = (await cs().listCheckpoints({ appName, userId: "u1", threadId: "src" })).checkpoints;
    expect(left.map((c) => [c.checkpointId, c.parentCheckpointId, values(c).a])).toEqual([["3", "", "2"]]);
    await cs().pruneThreads({ appName, userId: "u1", threadIds: ["src", "dst"], strategy: PruneThreadsRequest_Strategy.DELETE });
    expect(await rowCount(t(), "checkpoints", appName)).toBe(0);
  });

  it("refuses keep_latest on a thread that uses a DeltaChannel", async () => {
    const appName = unique("app");
    await put(t(), { appName, threadId: "d", checkpointId: "1", metadataJson: '{"counters_since_delta_snapshot":{"m":[1,1]}}' });
    await put(t(), { appName, threadId: "d", checkpointId: "2", parentCheckpointId: "1" });
    await expectCode(
      cs().pruneThreads({ appName, userId: "u1", threadIds: ["d"], strategy: PruneThreadsRequest_Strategy.KEEP_LATEST }),
      Code.FailedPrecondition,
      /DeltaChannel: d/,
    );
    expect((await cs().listCheckpoints({ appName, userId: "u1", threadId: "d" })).checkpoints).toHaveLength(2);
  });

  it("erases a user's threads with EraseUserData", async () => {
    const appName = unique("app");
    await put(t(), { appName, threadId: "t", checkpointId: "1" });
    await put(t(), { appName, userId: "u2", threadId: "t", checkpointId: "1" });
    await t().client.eraseUserData({ appName, userId: "u1" });
    await expectCode(cs().getCheckpoint({ appName, userId: "u1", threadId: "t" }), Code.NotFound);
    expect((await cs().getCheckpoint({ appName, userId: "u2", threadId: "t" })).checkpoint?.checkpointId).toBe("1");
  });

  it("refuses bad input with INVALID_ARGUMENT and writes nothing", async () => {
    const appName = unique("app");
    const ok = { appName, threadId: "t", checkpointId: "1" };
    await expectCode(put(t(), { ...ok, threadId: "" }), Code.InvalidArgument, /thread_id/);
    await expectCode(put(t(), { ...ok, userId: "" }), Code.InvalidArgument, /user_id/);
    await expectCode(put(t(), { ...ok, checkpointId: "" }), Code.InvalidArgument, /checkpoint_id/);
    await expectCode(put(t(), { ...ok, body: undefined }), Code.InvalidArgument, /body is required/);
    await expectCode(put(t(), { ...ok, metadata: { type: "", data: bytes("x") } }), Code.InvalidArgument, /metadata.type/);
    await expectCode(put(t(), { ...ok, metadataJson: "[1]" }), Code.InvalidArgument, /metadata_json must be a JSON object/);
    await expectCode(put(t(), { ...ok, metadataJson: "{" }), Code.InvalidArgument, /metadata_json is not valid JSON/);
    await expectCode(put(t(), { ...ok, metadataJson: '{"a":"\\u0000"}' }), Code.InvalidArgument, /U\+0000/);
    await expectCode(
      put(t(), { ...ok, channelVersions: { a: "1" }, newValues: [{ channel: "a", version: "2", value: typed("1") }] }),
      Code.InvalidArgument,
      /not the one in channel_versions/,
    );
    await expectCode(put(t(), { ...ok, checkpointNs: "a\u0001" }), Code.InvalidArgument, /checkpoint_ns/);
    await expectCode(
      cs().putWrites({
        appName,
        userId: "u1",
        threadId: "t",
        checkpointId: "1",
        taskId: "x",
        writes: [
          { channel: "a", value: typed("1"), idx: 0 },
          { channel: "b", value: typed("1"), idx: 0 },
        ],
      }),
      Code.InvalidArgument,
      /idx 0 appears twice/,
    );
    await expectCode(cs().listCheckpoints({ appName, userId: "u1", filterJson: "1" }), Code.InvalidArgument, /filter_json/);
    await expectCode(cs().pruneThreads({ appName, userId: "u1", threadIds: ["t"] }), Code.InvalidArgument, /strategy/);
    expect(await rowCount(t(), "checkpoints", appName)).toBe(0);
  });
});

const HOUR_NS = 3_600_000_000_000n;

describeContract(
  "CheckpointService retention",
  (t) => {
    const cs = () => t().clientFor(CheckpointService);
    const age = (appName: string, threadId: string) =>
      sql`UPDATE checkpoint_threads SET update_time_ns = update_time_ns - ${2n * HOUR_NS} WHERE app_name = ${appName} AND thread_id = ${threadId}`.execute(
        t().database.db,
      );

    it("reads an expired thread as gone at once, starts it afresh on the next write, and sweeps it", async () => {
      const appName = unique("app");
      await put(t(), { appName, threadId: "old", checkpointId: "1" });
      await put(t(), { appName, threadId: "kept", checkpointId: "1" });
      await age(appName, "old");
      await expectCode(cs().getCheckpoint({ appName, userId: "u1", threadId: "old" }), Code.NotFound);
      expect((await cs().listCheckpoints({ appName, userId: "u1" })).checkpoints.map((c) => c.threadId)).toEqual(["kept"]);
      expect((await cs().copyThread({ appName, userId: "u1", sourceThreadId: "old", targetThreadId: "x" })).checkpointsCopied).toBe(0n);

      await put(t(), { appName, threadId: "old", checkpointId: "2" });
      expect((await cs().listCheckpoints({ appName, userId: "u1", threadId: "old" })).checkpoints.map((c) => c.checkpointId)).toEqual([
        "2",
      ]);

      await age(appName, "old");
      await t().server.sweeper.sweepOnce();
      const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM checkpoint_threads WHERE app_name = ${appName}`.execute(
        t().database.db,
      );
      expect(Number(rows[0]?.n)).toBe(1);
    });
  },
  { policy: JSON.stringify({ defaults: { ttlSeconds: 3600 } }) },
);
