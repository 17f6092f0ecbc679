package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"sessionstore.dev/clients/go/internal/testserver"
	"sessionstore.dev/clients/go/sessionstore"
	pb "sessionstore.dev/gen/go/sessionstore/v1"
)

var srv *testserver.Server

func TestMain(m *testing.M) { os.Exit(testserver.Main(m, &srv)) }

type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), append([]string{"--url", srv.URL}, args...), strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func newSession(t *testing.T) (app, user, sid string) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	app, user = "cli-"+hex.EncodeToString(b), "u1"
	c, err := sessionstore.Dial(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.CreateSession(t.Context(), &pb.CreateSessionRequest{AppName: app, UserId: user})
	if err != nil {
		t.Fatal(err)
	}
	return app, user, resp.GetSession().GetId()
}

// The JSON a TypeScript or Python client would write for a model turn.
const eventJSON = `{
  "id": "ev-1",
  "invocationId": "inv-1",
  "author": "support_agent",
  "timestamp": "2025-06-01T10:00:00.123456789Z",
  "content": {"role": "model", "parts": [
    {"text": "Looking it up", "thought": true, "thoughtSignature": "AQID"},
    {"functionCall": {"id": "call-1", "name": "lookup_order", "args": {"order_id": "8842"}}},
    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
  ]},
  "actions": {"stateDelta": {"order": "8842", "temp:x": 1}, "artifactDelta": {"r.pdf": "2"}},
  "extra": {"isolationScope": "orders"}
}`

func TestAppendThenGet(t *testing.T) {
	app, user, sid := newSession(t)

	r := cli(t, eventJSON, "append-event", app, user, sid)
	if r.code != 0 {
		t.Fatalf("append-event exit %d: %s", r.code, r.stderr)
	}
	if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
		t.Errorf("append-event output should be one line: %q", r.stdout)
	}
	var appended pb.AppendEventResponse
	if err := protojson.Unmarshal([]byte(r.stdout), &appended); err != nil {
		t.Fatalf("append-event output is not an AppendEventResponse: %v\n%s", err, r.stdout)
	}
	if !appended.GetStored() || appended.GetRevision() != 1 || appended.GetEvent().GetSeq() != 1 {
		t.Errorf("append-event = %v", &appended)
	}

	r = cli(t, "", "get-session", app, user, sid)
	if r.code != 0 {
		t.Fatalf("get-session exit %d: %s", r.code, r.stderr)
	}
	var got pb.GetSessionResponse
	if err := protojson.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get-session output is not a GetSessionResponse: %v\n%s", err, r.stdout)
	}
	want := &pb.Event{}
	if err := protojson.Unmarshal([]byte(eventJSON), want); err != nil {
		t.Fatal(err)
	}
	want.Seq = 1
	delete(want.GetActions().GetStateDelta().GetFields(), "temp:x")
	if diff := cmp.Diff([]*pb.Event{want}, got.GetSession().GetEvents(), protocmp.Transform()); diff != "" {
		t.Errorf("stored event (-want +got):\n%s", diff)
	}
	if got.GetSession().GetState().AsMap()["order"] != "8842" {
		t.Errorf("state = %v", got.GetSession().GetState().AsMap())
	}
	if !proto.Equal(appended.GetEvent(), got.GetSession().GetEvents()[0]) {
		t.Error("append-event and get-session disagree on the stored event")
	}
	// Field names are the JSON names every language's protobuf JSON uses.
	for _, key := range []string{`"appName"`, `"lastUpdateTime"`, `"invocationId"`, `"functionCall"`, `"revision":"1"`} {
		if !strings.Contains(r.stdout, key) {
			t.Errorf("get-session output lacks %s: %s", key, r.stdout)
		}
	}

	r = cli(t, "", "--num-recent-events", "0", "get-session", app, user, sid)
	if r.code != 0 || strings.Contains(r.stdout, `"events"`) {
		t.Errorf("--num-recent-events 0: exit %d, %s", r.code, r.stdout)
	}
}

func TestErrorsAndUsage(t *testing.T) {
	app, user, sid := newSession(t)
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"missing session", "", []string{"get-session", app, user, "nope"}, 1, "sessionstore-cli: NotFound: "},
		{"stale writer", `{"author":"user"}`, []string{"--expected-revision", "7", "append-event", app, user, sid}, 1, "sessionstore-cli: Aborted: "},
		{"invalid event", `{}`, []string{"append-event", app, user, sid}, 1, "sessionstore-cli: InvalidArgument: "},
		{"not an event", `{"author": 3}`, []string{"append-event", app, user, sid}, 2, "stdin is not an Event"},
		{"unknown field", `{"author": "user", "nope": 1}`, []string{"append-event", app, user, sid}, 2, "stdin is not an Event"},
		{"unknown command", "", []string{"drop-session", app, user, sid}, 2, `unknown command "drop-session"`},
		{"missing arguments", "", []string{"get-session", app}, 2, "usage:"},
	} {
		r := cli(t, tc.stdin, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.name, r.code, r.stderr, r.stdout, tc.code, tc.stderr)
		}
	}
}

// The binary itself, as the cross-language test runs it.
func TestBinary(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "sessionstore-cli")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	app, user, sid := newSession(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	cmd := exec.CommandContext(ctx, bin, "--url", srv.URL, "append-event", app, user, sid)
	cmd.Stdin = strings.NewReader(eventJSON)
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"stored":true`) {
		t.Fatalf("append-event: %v, %s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, "--url", srv.URL, "get-session", app, user, sid).Output()
	if err != nil || !strings.Contains(string(out), `"id":"ev-1"`) {
		t.Fatalf("get-session: %v, %s", err, out)
	}
	err = exec.CommandContext(ctx, bin, "--url", srv.URL, "get-session", app, user, "missing").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("get-session of a missing session: %v, want exit status 1", err)
	}
}
