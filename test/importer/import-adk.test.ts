// importAdk on SQLite databases written by google-adk's own
// DatabaseSessionService (fixtures/make-adk-databases.py), in both of ADK's
// schemas, into both stores through the real API: the store then holds what
// ADK's service returned for every session (fixtures/adk-expected.json), a
// dry run writes nothing and a second run writes nothing again.
// clients/python/tests/test_import_adk.py does the same end to end against
// ADK on SQLite and PostgreSQL, compared through GrpcSessionService.

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, equals, type JsonValue } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import initSqlJs from "sql.js";
import { expect, it } from "vitest";
import { EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { AdkDatabase } from "../../src/importer/adk/adk-database.js";
import { runImportAdk } from "../../src/importer/adk/cli.js";
import { importAdk, STATE_CARRIER_SESSION } from "../../src/importer/adk/import.js";
import { pythonEventToProto } from "../../src/importer/adk/python-event.js";
import { describeContract } from "../support/contract.js";

type Expected = Record<string, { state: Record<string, JsonValue>; last_update_time: number; events: Record<string, JsonValue>[] }>;
const expected = JSON.parse(readFileSync(new URL("fixtures/adk-expected.json", import.meta.url), "utf8")) as Record<string, Expected>;
const fixture = (schema: string) => fileURLToPath(new URL(`fixtures/adk-${schema}.db`, import.meta.url));

const seconds = (t: Timestamp | undefined) => Number(t?.seconds) + (t?.nanos ?? 0) / 1e9;

/** ADK's defaults that its reader puts back anyway (the v0 schema has no column for them). */
function withoutDefaults(e: Record<string, JsonValue>): Record<string, JsonValue> {
  const d = { ...e };
  if (JSON.stringify(d.node_info) === '{"path":""}') delete d.node_info;
  if (Array.isArray(d.long_running_tool_ids) && d.long_running_tool_ids.length === 0) delete d.long_running_tool_ids;
  return d;
}

for (const schema of ["v1", "v0"]) {
  describeContract(`import-adk from ADK's ${schema} schema on SQLite`, (t) => {
    it("reads and converts everything on a dry run and writes nothing", async () => {
      const db = await AdkDatabase.open(fixture(schema));
      try {
        expect(db.schema).toBe(schema.slice(1));
        const summary = await importAdk(db, t().client, { app: "support", dryRun: true });
        expect(summary).toMatchObject({ sessions: 3, events: 8, eventsWritten: 0, sessionsCreated: 0 });
      } finally {
        await db.close();
      }
      expect((await t().client.listSessions({ appName: "support" })).sessions).toEqual([]);
    });

    it("imports every session of the app as ADK returns it, once", async () => {
      const db = await AdkDatabase.open(fixture(schema));
      try {
        const first = await importAdk(db, t().client, { app: "support", batch: 3, concurrency: 2 });
        expect(first).toMatchObject({ sessions: 3, sessionsCreated: 3, events: 8, eventsWritten: 8, eventsAlreadyThere: 0 });
        const again = await importAdk(db, t().client, { app: "support" });
        expect(again).toMatchObject({ sessions: 3, sessionsCreated: 0, events: 8, eventsWritten: 0, eventsAlreadyThere: 8 });
      } finally {
        await db.close();
      }
      const listed = await t().client.listSessions({ appName: "support" });
      expect(listed.sessions.map((s) => `${s.userId}/${s.id}`).sort()).toEqual(Object.keys(expected[schema] ?? {}).sort());
      expect(listed.sessions.map((s) => s.id)).not.toContain(STATE_CARRIER_SESSION);
      for (const [key, want] of Object.entries(expected[schema] ?? {})) {
        const [userId, sessionId] = key.split("/") as [string, string];
        const got = (await t().client.getSession({ appName: "support", userId, sessionId })).session;
        expect(got?.state).toEqual(want.state);
        expect(Math.abs(seconds(got?.lastUpdateTime) - want.last_update_time)).toBeLessThanOrEqual(1e-6);
        expect(got?.events.map((e) => e.id)).toEqual(want.events.map((e) => e.id));
        for (const [i, e] of (got?.events ?? []).entries()) {
          const w = pythonEventToProto(withoutDefaults(want.events[i] as Record<string, JsonValue>));
          const g = create(EventSchema, { ...e, seq: 0n });
          g.extra =
            e.extra && Object.keys(withoutDefaults(e.extra as Record<string, JsonValue>)).length
              ? withoutDefaults(e.extra as Record<string, JsonValue>)
              : undefined;
          w.extra = w.extra && Object.keys(w.extra).length ? w.extra : undefined;
          // v0 rows are exact to the microsecond, ADK's float is the nearest double: the same float in Python.
          expect(Math.abs(seconds(g.timestamp) - seconds(w.timestamp))).toBeLessThan(1e-6);
          g.timestamp = w.timestamp;
          expect(equals(EventSchema, g, w), `${key} event ${e.id}`).toBe(true);
        }
      }
      expect((await t().client.listSessions({ appName: "other" })).sessions).toEqual([]);
    });
  });
}

describeContract("import-adk stops at an event the server refuses", (t) => {
  it("names the session and the event, and keeps what came before", async () => {
    // ADK on SQLite stores a NUL in state, which no store's state can hold.
    const SQL = await initSqlJs();
    const sqlite = new SQL.Database(readFileSync(fixture("v1")));
    sqlite.run(`UPDATE events SET event_data = json_set(event_data, '$.actions.state_delta.bad', 'a' || char(0) || 'b') WHERE id = 'u1-3'`);
    const path = join(mkdtempSync(join(tmpdir(), "adk-")), "bad.db");
    writeFileSync(path, sqlite.export());
    sqlite.close();
    const db = await AdkDatabase.open(path);
    try {
      await expect(importAdk(db, t().client, { app: "support", concurrency: 1 })).rejects.toThrow(
        /session support\/u1\/s-u1: event u1-3: InvalidArgument: event.actions.state_delta.bad contains a NUL/,
      );
    } finally {
      await db.close();
    }
    const got = await t().client.getSession({ appName: "support", userId: "u1", sessionId: "s-u1" });
    expect(got.session?.events.map((e) => e.id)).toEqual(["u1-1", "u1-2"]);
  });
});

it("says what is wrong with its arguments and its source", async () => {
  expect(await runImportAdk([])).toBe(2);
  expect(await runImportAdk(["--from", "x.db", "--batch", "0"])).toBe(2);
  expect(await runImportAdk(["--from", "x.db", "--nope"])).toBe(2);
  expect(await runImportAdk(["--from", "mysql://h/db", "--dry-run"])).toBe(1);
  expect(await runImportAdk(["--from", "/nonexistent/adk.db", "--dry-run"])).toBe(1);
  expect(await runImportAdk(["--from", fixture("v1"), "--dry-run"])).toBe(0);
});
