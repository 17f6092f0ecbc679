package sessionstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/google/go-cmp/cmp"

	"sessionstore.dev/clients/go/internal/testserver"
	"sessionstore.dev/clients/go/sessionstore"
	pb "sessionstore.dev/gen/go/sessionstore/v1"
)

var srv *testserver.Server

func TestMain(m *testing.M) { os.Exit(testserver.Main(m, &srv)) }

func dial(t *testing.T) *sessionstore.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := sessionstore.Dial(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// uniq keeps tests independent of each other on the one shared database.
func uniq(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHealth(t *testing.T) {
	c := dial(t)
	resp, err := c.Health.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "sessionstore.v1.SessionService"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("status = %v", resp.GetStatus())
	}
}

func TestSessionRoundTrip(t *testing.T) {
	c := dial(t)
	ctx := t.Context()
	app, user, sid := uniq("app"), uniq("user"), "s-1"

	created, err := c.CreateSession(ctx, &pb.CreateSessionRequest{
		AppName: app, UserId: user, SessionId: proto.String(sid),
		State: mustStruct(t, map[string]any{"topic": "orders", "user:tier": "gold", "app:region": "eu", "temp:scratch": 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := created.GetSession()
	if s.GetId() != sid || s.GetRevision() != 0 || len(s.GetEvents()) != 0 {
		t.Fatalf("created = %v", s)
	}
	wantState := map[string]any{"topic": "orders", "user:tier": "gold", "app:region": "eu"}
	if diff := cmp.Diff(wantState, s.GetState().AsMap()); diff != "" {
		t.Fatalf("created state (-want +got):\n%s", diff)
	}

	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}
	events := []*pb.Event{
		{
			Id: "e1", InvocationId: "inv-1", Author: "user",
			Timestamp: sessionstore.Timestamp(base.Add(1 * time.Second)),
			Content:   &pb.Content{Role: proto.String("user"), Parts: []*pb.Part{{Data: &pb.Part_Text{Text: "Where is order 8842?"}}}},
		},
		{
			Id: "e2", InvocationId: "inv-1", Author: "support_agent", Branch: proto.String("root.support_agent"),
			Timestamp: sessionstore.Timestamp(base.Add(2*time.Second + 123456789)),
			Content: &pb.Content{Role: proto.String("model"), Parts: []*pb.Part{
				{Data: &pb.Part_Text{Text: "Let me check."}, Thought: proto.Bool(true), ThoughtSignature: []byte{1, 2, 3}},
				{Data: &pb.Part_FunctionCall{FunctionCall: &pb.FunctionCall{
					Id: proto.String("call-1"), Name: "lookup_order",
					Args:  mustStruct(t, map[string]any{"order_id": "8842", "verbose": true, "fields": []any{"status", "eta"}}),
					Extra: mustStruct(t, map[string]any{"willContinue": false}),
				}}},
			}},
			LongRunningToolIds: []string{"call-1"},
			UsageMetadata:      mustStruct(t, map[string]any{"promptTokenCount": 12, "totalTokenCount": 20}),
			ModelVersion:       proto.String("gemini-test"),
			Actions: &pb.EventActions{
				StateDelta:    mustStruct(t, map[string]any{"order_id": "8842", "user:last_order": "8842", "temp:attempt": 1}),
				ArtifactDelta: map[string]int64{"receipt.pdf": 2},
			},
			Extra: mustStruct(t, map[string]any{"isolationScope": "orders", "routes": []any{"a", "b"}}),
		},
		{
			Id: "e3", InvocationId: "inv-1", Author: "support_agent",
			Timestamp: sessionstore.Timestamp(base.Add(3 * time.Second)),
			Content: &pb.Content{Role: proto.String("user"), Parts: []*pb.Part{
				{Data: &pb.Part_FunctionResponse{FunctionResponse: &pb.FunctionResponse{
					Id: proto.String("call-1"), Name: "lookup_order",
					Response: mustStruct(t, map[string]any{"status": "shipped", "eta": nil}),
				}}},
			}},
		},
		{
			Id: "e4", InvocationId: "inv-2", Author: "user",
			Timestamp: sessionstore.Timestamp(base.Add(4 * time.Second)),
			Content: &pb.Content{Role: proto.String("user"), Parts: []*pb.Part{
				{Data: &pb.Part_InlineData{InlineData: &pb.Blob{MimeType: "image/png", Data: png, DisplayName: proto.String("receipt.png")}}},
				{Data: &pb.Part_FileData{FileData: &pb.FileData{MimeType: "application/pdf", FileUri: "gs://bucket/receipt.pdf"}}},
			}},
			TurnComplete: proto.Bool(true),
		},
	}

	var stored []*pb.Event
	for i, e := range events {
		resp, err := c.AppendEvent(ctx, &pb.AppendEventRequest{
			AppName: app, UserId: user, SessionId: sid, Event: e, ExpectedRevision: proto.Int64(int64(i)),
		})
		if err != nil {
			t.Fatalf("append %s: %v", e.GetId(), err)
		}
		if !resp.GetStored() || resp.GetDuplicate() || resp.GetRevision() != int64(i+1) || resp.GetEvent().GetSeq() != int64(i+1) {
			t.Fatalf("append %s: %v", e.GetId(), resp)
		}
		stored = append(stored, resp.GetEvent())
	}
	// temp: keys never reach storage, not even inside the stored event.
	if _, ok := stored[1].GetActions().GetStateDelta().GetFields()["temp:attempt"]; ok {
		t.Error("temp: key kept in the stored state delta")
	}

	// What was sent comes back, with seq filled in and temp: keys gone.
	want := make([]*pb.Event, len(events))
	for i, e := range events {
		w := proto.CloneOf(e)
		w.Seq = int64(i + 1)
		if d := w.GetActions().GetStateDelta(); d != nil {
			delete(d.Fields, "temp:attempt")
		}
		want[i] = w
	}
	got, err := c.GetSession(ctx, &pb.GetSessionRequest{AppName: app, UserId: user, SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.GetSession().GetEvents(), protocmp.Transform()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(stored, got.GetSession().GetEvents(), protocmp.Transform()); diff != "" {
		t.Fatalf("append responses vs stored (-want +got):\n%s", diff)
	}
	sess := got.GetSession()
	// The events are backdated to 2025: the update time never goes back
	// before the session's creation.
	wantUpdate := sessionstore.Time(sess.GetCreateTime())
	if sess.GetRevision() != 4 || !sessionstore.Time(sess.GetLastUpdateTime()).Equal(wantUpdate) {
		t.Errorf("revision %d, last update %v, want %v", sess.GetRevision(), sessionstore.Time(sess.GetLastUpdateTime()), wantUpdate)
	}
	wantState["order_id"] = "8842"
	wantState["user:last_order"] = "8842"
	if diff := cmp.Diff(wantState, sess.GetState().AsMap()); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}

	ids := func(r *pb.GetSessionResponse) []string {
		var out []string
		for _, e := range r.GetSession().GetEvents() {
			out = append(out, e.GetId())
		}
		return out
	}
	for _, w := range []struct {
		name  string
		req   *pb.GetSessionRequest
		want  []string
		state bool
	}{
		{"two most recent", &pb.GetSessionRequest{NumRecentEvents: proto.Int32(2)}, []string{"e3", "e4"}, true},
		{"none", &pb.GetSessionRequest{NumRecentEvents: proto.Int32(0)}, nil, true},
		{"after e2's time, inclusive", &pb.GetSessionRequest{AfterTimestamp: stored[1].GetTimestamp()}, []string{"e2", "e3", "e4"}, true},
		{"both", &pb.GetSessionRequest{AfterTimestamp: stored[1].GetTimestamp(), NumRecentEvents: proto.Int32(1)}, []string{"e4"}, true},
	} {
		w.req.AppName, w.req.UserId, w.req.SessionId = app, user, sid
		r, err := c.GetSession(ctx, w.req)
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if got := ids(r); !slices.Equal(got, w.want) {
			t.Errorf("%s: events %v, want %v", w.name, got, w.want)
		}
		// A window limits events, never state.
		if diff := cmp.Diff(wantState, r.GetSession().GetState().AsMap()); diff != "" {
			t.Errorf("%s: state (-want +got):\n%s", w.name, diff)
		}
	}

	// Pages through the log, newest first.
	var pageIDs []string
	req := &pb.ListEventsRequest{AppName: app, UserId: user, SessionId: sid, PageSize: 3, Order: pb.ListEventsRequest_ORDER_DESCENDING}
	for {
		page, err := c.ListEvents(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.GetEvents() {
			pageIDs = append(pageIDs, e.GetId())
		}
		if page.GetNextPageToken() == "" {
			break
		}
		req.PageToken = page.GetNextPageToken()
	}
	if !slices.Equal(pageIDs, []string{"e4", "e3", "e2", "e1"}) {
		t.Errorf("ListEvents = %v", pageIDs)
	}

	// Re-sending an event id stores nothing and returns the stored event.
	dup, err := c.AppendEvent(ctx, &pb.AppendEventRequest{AppName: app, UserId: user, SessionId: sid, Event: events[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !dup.GetDuplicate() || dup.GetRevision() != 4 || dup.GetEvent().GetSeq() != 1 {
		t.Errorf("duplicate append = %v", dup)
	}

	// A second session, another user: listings and user state.
	if _, err := c.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: user, SessionId: proto.String("s-2")}); err != nil {
		t.Fatal(err)
	}
	other := uniq("other")
	if _, err := c.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: other}); err != nil {
		t.Fatal(err)
	}
	listed, err := c.ListSessions(ctx, &pb.ListSessionsRequest{AppName: app, UserId: user})
	if err != nil {
		t.Fatal(err)
	}
	var listedIDs []string
	for _, s := range listed.GetSessions() {
		listedIDs = append(listedIDs, s.GetId())
		if len(s.GetEvents()) != 0 {
			t.Errorf("listing of %s carries events", s.GetId())
		}
	}
	slices.Sort(listedIDs)
	if !slices.Equal(listedIDs, []string{"s-1", "s-2"}) {
		t.Errorf("ListSessions(user) = %v", listedIDs)
	}
	all, err := c.ListSessions(ctx, &pb.ListSessionsRequest{AppName: app, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.GetSessions()) != 2 || all.GetNextPageToken() == "" {
		t.Errorf("ListSessions(app, page 2) = %d sessions, token %q", len(all.GetSessions()), all.GetNextPageToken())
	}
	rest, err := c.ListSessions(ctx, &pb.ListSessionsRequest{AppName: app, PageSize: 2, PageToken: all.GetNextPageToken()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.GetSessions()) != 1 || rest.GetNextPageToken() != "" {
		t.Errorf("ListSessions(app, page 2) = %d sessions, token %q", len(rest.GetSessions()), rest.GetNextPageToken())
	}

	us, err := c.GetUserState(ctx, &pb.GetUserStateRequest{AppName: app, UserId: user})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"tier": "gold", "last_order": "8842"}, us.GetState().AsMap()); diff != "" {
		t.Errorf("user state (-want +got):\n%s", diff)
	}

	// Delete: the session and its events go, user state stays, and deleting
	// again is not an error.
	for range 2 {
		if _, err := c.DeleteSession(ctx, &pb.DeleteSessionRequest{AppName: app, UserId: user, SessionId: sid}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.GetSession(ctx, &pb.GetSessionRequest{AppName: app, UserId: user, SessionId: sid})
	if !sessionstore.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NOT_FOUND", err)
	}
	us, err = c.GetUserState(ctx, &pb.GetUserStateRequest{AppName: app, UserId: user})
	if err != nil || us.GetState().AsMap()["tier"] != "gold" {
		t.Errorf("user state after delete = %v, %v", us.GetState().AsMap(), err)
	}
}

func TestErrors(t *testing.T) {
	c := dial(t)
	ctx := t.Context()
	app, user := uniq("app"), uniq("user")
	created, err := c.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: user})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.GetSession().GetId()
	if len(sid) != 36 {
		t.Errorf("generated id %q is not a UUID", sid)
	}

	_, err = c.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: user, SessionId: proto.String(sid)})
	if !sessionstore.IsAlreadyExists(err) {
		t.Errorf("create with a taken id: %v, want ALREADY_EXISTS", err)
	}

	// Two writers read revision 0; the second to append is stale.
	appendAt := func(id string, rev int64) error {
		_, err := c.AppendEvent(ctx, &pb.AppendEventRequest{
			AppName: app, UserId: user, SessionId: sid, ExpectedRevision: proto.Int64(rev),
			Event: &pb.Event{Id: id, Author: "agent", Actions: &pb.EventActions{StateDelta: mustStruct(t, map[string]any{"writer": id})}},
		})
		return err
	}
	if err := appendAt("first", 0); err != nil {
		t.Fatal(err)
	}
	err = appendAt("second", 0)
	if status.Code(err) != codes.Aborted || !sessionstore.IsStale(err) {
		t.Fatalf("stale append: %v, want ABORTED", err)
	}
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "modified in storage") || !strings.Contains(msg, "current revision 1") {
		t.Errorf("stale message %q should say the session was modified and name the revision", msg)
	}
	got, err := c.GetSession(ctx, &pb.GetSessionRequest{AppName: app, UserId: user, SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetSession().GetRevision() != 1 || got.GetSession().GetState().AsMap()["writer"] != "first" {
		t.Errorf("the stale write leaked: %v", got.GetSession())
	}

	// Another user's session reads as missing.
	_, err = c.GetSession(ctx, &pb.GetSessionRequest{AppName: app, UserId: "someone-else", SessionId: sid})
	if !sessionstore.IsNotFound(err) {
		t.Errorf("get as another user: %v, want NOT_FOUND", err)
	}
	_, err = c.AppendEvent(ctx, &pb.AppendEventRequest{AppName: app, UserId: user, SessionId: "missing", Event: &pb.Event{Author: "user"}})
	if !sessionstore.IsNotFound(err) {
		t.Errorf("append to a missing session: %v, want NOT_FOUND", err)
	}
	_, err = c.AppendEvent(ctx, &pb.AppendEventRequest{AppName: app, UserId: user, SessionId: sid, Event: &pb.Event{}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "author") {
		t.Errorf("append without author: %v, want INVALID_ARGUMENT naming the field", err)
	}

	// A partial event is answered but not stored.
	resp, err := c.AppendEvent(ctx, &pb.AppendEventRequest{AppName: app, UserId: user, SessionId: sid, Event: &pb.Event{Author: "agent", Partial: proto.Bool(true)}})
	if err != nil || resp.GetStored() {
		t.Errorf("partial append = %v, %v; want unstored", resp, err)
	}
}

func TestStreamEventsTail(t *testing.T) {
	c := dial(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	app, user := uniq("app"), uniq("user")
	created, err := c.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: user})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.GetSession().GetId()
	appendText := func(id, text string) {
		t.Helper()
		_, err := c.AppendEvent(ctx, &pb.AppendEventRequest{AppName: app, UserId: user, SessionId: sid, Event: &pb.Event{
			Id: id, Author: "user", Content: &pb.Content{Parts: []*pb.Part{{Data: &pb.Part_Text{Text: text}}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	appendText("h1", "history one")
	appendText("h2", "history two")

	stream, err := c.StreamEvents(ctx, &pb.StreamEventsRequest{
		AppName: app, UserId: user, SessionId: sid,
		Start:             &pb.StreamEventsRequest_AfterSeq{AfterSeq: 0},
		HeartbeatInterval: durationpb.New(time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	next := func() *pb.StreamEventsResponse {
		t.Helper()
		for {
			msg, err := stream.Recv()
			if err != nil {
				t.Fatalf("recv: %v", err)
			}
			if msg.GetHeartbeat() == nil {
				return msg
			}
		}
	}
	for _, want := range []string{"h1", "h2"} {
		msg := next()
		if msg.GetEvent().GetEvent().GetId() != want || msg.GetEvent().GetSessionId() != sid || msg.GetEvent().GetCursor() == "" {
			t.Fatalf("history: got %v, want event %s", msg, want)
		}
	}
	caught := next()
	if caught.GetCaughtUp() == nil || caught.GetCaughtUp().GetCursor() == "" {
		t.Fatalf("want caught_up with a cursor, got %v", caught)
	}
	appendText("live", "live one")
	live := next()
	if live.GetEvent().GetEvent().GetId() != "live" || live.GetEvent().GetEvent().GetSeq() != 3 {
		t.Fatalf("live: got %v", live)
	}

	// Resuming from the caught_up cursor gives the live event once, then
	// caught_up again; a from_now tail gives nothing old.
	resumed, err := c.StreamEvents(ctx, &pb.StreamEventsRequest{
		AppName: app, UserId: user, SessionId: sid,
		Start: &pb.StreamEventsRequest_Cursor{Cursor: caught.GetCaughtUp().GetCursor()},
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := resumed.Recv()
	if err != nil || first.GetEvent().GetEvent().GetId() != "live" {
		t.Fatalf("resume: %v, %v", first, err)
	}
	fromNow, err := c.StreamEvents(ctx, &pb.StreamEventsRequest{
		AppName: app, UserId: user, SessionId: sid, Start: &pb.StreamEventsRequest_FromNow{FromNow: &emptypb.Empty{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := fromNow.Recv(); err != nil || msg.GetCaughtUp() == nil {
		t.Fatalf("from_now: first message %v, %v; want caught_up", msg, err)
	}
}
