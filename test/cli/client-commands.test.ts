import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken, newToken } from "../../src/auth/tokens.js";
import { backends, pgliteBackend } from "../support/backends.js";
import { cli, jsonLines } from "../support/cli.js";
import { startTestServer, type TestServer } from "../support/server.js";

const APP = "cli-app";

async function seed(t: TestServer) {
  for (const [userId, sessionId] of [
    ["alice", "s1"],
    ["alice", "s2"],
    ["bob", "s3"],
  ] as const) {
    await t.client.createSession({ appName: APP, userId, sessionId, state: { "user:tier": "gold", topic: sessionId } });
  }
  const key = { appName: APP, userId: "alice", sessionId: "s1" };
  await t.client.appendEvent({
    ...key,
    event: {
      id: "e1",
      author: "user",
      invocationId: "i1",
      content: { role: "user", parts: [{ data: { case: "text", value: "Weather in Paris?" } }] },
    },
  });
  await t.client.appendEvent({
    ...key,
    event: {
      id: "e2",
      author: "weather_agent",
      invocationId: "i1",
      content: { role: "model", parts: [{ data: { case: "functionCall", value: { name: "get_weather", args: { city: "Paris" } } } }] },
      actions: { stateDelta: { city: "Paris" } },
    },
  });
  await t.client.appendEvent({
    ...key,
    event: {
      id: "e3",
      author: "weather_agent",
      invocationId: "i1",
      content: {
        role: "user",
        parts: [{ data: { case: "functionResponse", value: { name: "get_weather", response: { sky: "clear" } } } }],
      },
    },
  });
}

for (const backend of backends()) {
  describe.skipIf(!backend.available)(`client commands on ${backend.name}`, () => {
    let t: TestServer;
    let server: string[];
    beforeAll(async () => {
      t = await startTestServer(backend);
      server = ["--server", t.server.url];
      await seed(t);
    });
    afterAll(() => t?.close());

    it("sessions ls lists every user's sessions, or one user's, as text or JSON", async () => {
      const all = await cli(["sessions", "ls", "--app", APP, ...server, "--json"]);
      expect(all.code).toBe(0);
      expect(jsonLines(all.stdout).map((s) => s.id)).toEqual(expect.arrayContaining(["s1", "s2", "s3"]));
      const alice = await cli(["sessions", "ls", "-a", APP, "-u", "alice", ...server]);
      expect(alice.code).toBe(0);
      expect(alice.stdout).toMatch(/^SESSION/);
      expect(alice.stdout).toMatch(/s1 +alice +3 /);
      expect(alice.stdout).not.toContain("s3");
      const limited = await cli(["sessions", "ls", "--app", APP, "--limit", "1", "--json", ...server]);
      expect(jsonLines(limited.stdout)).toHaveLength(1);
    });

    it("sessions get shows state and events: author, text, function calls and the state delta", async () => {
      const got = await cli(["sessions", "get", "--app", APP, "--user", "alice", "--session", "s1", ...server]);
      expect(got.code).toBe(0);
      expect(got.stdout).toContain("session s1");
      expect(got.stdout).toContain('"user:tier": "gold"');
      expect(got.stdout).toMatch(/#1 user {2}Weather in Paris\?/);
      expect(got.stdout).toMatch(/#2 weather_agent {2}→ get_weather\(\{"city":"Paris"\}\) {2}Δ city=Paris/);
      expect(got.stdout).toMatch(/#3 weather_agent {2}← get_weather: \{"sky":"clear"\}/);
      expect(got.stdout).not.toContain("\u001b[");
      const json = await cli(["sessions", "get", "--app", APP, "--user", "alice", "--session", "s1", "--events", "1", "--json", ...server]);
      const [session] = jsonLines(json.stdout);
      expect(((session?.events ?? []) as { id: string }[]).map((e) => e.id)).toEqual(["e3"]);
    });

    it("events ls pages through a session's events, either way", async () => {
      const listed = await cli(["events", "ls", "--app", APP, "--user", "alice", "--session", "s1", "--json", ...server]);
      expect(listed.code).toBe(0);
      expect(jsonLines(listed.stdout).map((e) => [e.id, e.seq])).toEqual([
        ["e1", "1"],
        ["e2", "2"],
        ["e3", "3"],
      ]);
      const reversed = await cli([
        "events",
        "ls",
        "--app",
        APP,
        "--user",
        "alice",
        "--session",
        "s1",
        "--reverse",
        "--limit",
        "2",
        ...server,
      ]);
      expect(
        reversed.stdout
          .trim()
          .split("\n")
          .map((l) => /#(\d+)/.exec(l)?.[1]),
      ).toEqual(["3", "2"]);
    });

    it("tail --once --from-start delivers an app's stored events, then stops", async () => {
      const tailed = await cli(["tail", "--app", APP, "--from-start", "--once", "--json", ...server]);
      expect(tailed.code).toBe(0);
      const lines = jsonLines(tailed.stdout);
      expect(lines.filter((l) => l.event).map((l) => (l.event as { event: { id: string } }).event.id)).toEqual(["e1", "e2", "e3"]);
      expect(lines.at(-1)).toHaveProperty("caughtUp");
      const human = await cli(["tail", "--app", APP, "--user", "alice", "--from-start", "--once", ...server], { FORCE_COLOR: "1" });
      expect(human.stdout).toContain("alice/s1");
      expect(human.stdout).toContain("\u001b[33m→ get_weather");
    });

    it("sessions rm deletes; a missing session then reads as NOT_FOUND with exit code 1", async () => {
      await t.client.createSession({ appName: APP, userId: "carol", sessionId: "gone" });
      const key = ["--app", APP, "--user", "carol", "--session", "gone", ...server];
      expect((await cli(["sessions", "rm", ...key])).code).toBe(0);
      const after = await cli(["sessions", "get", ...key]);
      expect(after.code).toBe(1);
      expect(after.stderr).toMatch(/^sessionstore sessions: NotFound: /);
    });

    it("users erase asks for --yes, then erases and says how much", async () => {
      await t.client.createSession({ appName: APP, userId: "dave", sessionId: "d1" });
      const refused = await cli(["users", "erase", "--app", APP, "--user", "dave", ...server]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/add --yes/);
      expect((await t.client.listSessions({ appName: APP, userId: "dave" })).sessions).toHaveLength(1);
      const erased = await cli(["users", "erase", "--app", APP, "--user", "dave", "--yes", ...server]);
      expect(erased.code).toBe(0);
      expect(erased.stdout).toMatch(/erased user dave of cli-app: 1 sessions, 0 events/);
      expect((await t.client.listSessions({ appName: APP, userId: "dave" })).sessions).toHaveLength(0);
    });
  });
}

describe("client commands: usage and failures", () => {
  let t: TestServer;
  const secret = newToken();
  beforeAll(async () => {
    t = await startTestServer(pgliteBackend, {
      tokens: JSON.stringify([{ name: "ops", sha256: hashToken(secret), apps: "*" }]),
    });
  });
  afterAll(() => t?.close());

  it("exits 2 with a clear message for wrong usage", async () => {
    const cases: [string[], RegExp][] = [
      [["sessions", "ls"], /--app is required/],
      [["sessions", "ls", "--app", "a", "--bogus"], /unknown option --bogus/],
      [["sessions", "ls", "--app"], /--app needs a value/],
      [["sessions", "ls", "--app", "a", "--limit", "x"], /--limit must be an integer/],
      [["sessions", "frobnicate"], /unknown subcommand "frobnicate"/],
      [["sessions"], /usage: sessionstore sessions <subcommand>/],
      [["tail", "--app", "a", "--session", "s"], /--session needs --user/],
      [["tail", "--app", "a", "--from-start", "--cursor", "c"], /at most one of/],
      [["sessions", "ls", "--app", "a", "--server", "not a url"], /--server: target "not a url"/],
      [["nonsense"], /unknown command "nonsense"/],
    ];
    for (const [argv, message] of cases) {
      const run = await cli(argv);
      expect({ argv, code: run.code }).toEqual({ argv, code: 2 });
      expect(run.stderr).toMatch(message);
    }
  });

  it("prints help on stdout with exit 0, for the CLI and every command", async () => {
    const top = await cli(["--help"]);
    expect(top.code).toBe(0);
    for (const name of ["serve", "sessions", "events", "users", "tail", "token"]) expect(top.stdout).toContain(`  ${name} `);
    const ls = await cli(["sessions", "ls", "--help"]);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/--server URL +the server.*env\s+SESSIONSTORE_SERVER, default http:\/\/127\.0\.0\.1:50051/s);
  });

  it("says the server wants a token, and takes one from --token or SESSIONSTORE_TOKEN", async () => {
    const args = ["sessions", "ls", "--app", "a", "--server", t.server.url];
    const without = await cli(args);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/wants a valid token.*--token or set SESSIONSTORE_TOKEN/);
    expect((await cli([...args, "--token", secret])).code).toBe(0);
    expect((await cli(args, { SESSIONSTORE_TOKEN: secret })).code).toBe(0);
  });

  it("exits 1 saying the server is unavailable when nothing listens", async () => {
    const run = await cli(["sessions", "ls", "--app", "a", "--server", "http://127.0.0.1:1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/the server is unavailable .*is it running at that address\?/);
  });
});
