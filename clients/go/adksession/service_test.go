package adksession_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"
	"google.golang.org/genai"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"sessionstore.dev/clients/go/adksession"
	"sessionstore.dev/clients/go/internal/faultproxy"
	"sessionstore.dev/clients/go/internal/testserver"
	"sessionstore.dev/clients/go/sessionstore"
)

var srv *testserver.Server

func TestMain(m *testing.M) { os.Exit(testserver.Main(m, &srv)) }

func newService(t *testing.T) *adksession.Service {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := sessionstore.Dial(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return adksession.New(c)
}

func uniq(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// adk-go's own conformance suite. It expects every setup to start from no
// sessions in its app, and the API has no way to drop app or user state, so
// each run gets an app of its own and setup deletes that app's sessions.
func TestADKConformance(t *testing.T) {
	app := uniq("testApp")
	sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{
		SupportsUserProvidedSessionID: true,
		ProvidesServerAssignedEventID: false,
		AppName:                       app,
	}, func(t *testing.T) session.Service {
		svc := newService(t)
		ctx := context.Background()
		all, err := svc.List(ctx, &session.ListRequest{AppName: app})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all.Sessions {
			if err := svc.Delete(ctx, &session.DeleteRequest{AppName: app, UserID: s.UserID(), SessionID: s.ID()}); err != nil {
				t.Fatal(err)
			}
		}
		return svc
	})
}

func TestStaleCopyIsRefused(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	app, user := uniq("app"), uniq("user")
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: user})
	if err != nil {
		t.Fatal(err)
	}
	get := func() session.Session {
		got, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: created.Session.ID()})
		if err != nil {
			t.Fatal(err)
		}
		return got.Session
	}
	a, b := get(), get()
	ev := func(id string) *session.Event {
		e := session.NewEvent(ctx, "inv-"+id)
		e.ID, e.Author = id, "agent"
		e.Actions.StateDelta["writer"] = id
		return e
	}
	if err := svc.AppendEvent(ctx, a, ev("a1")); err != nil {
		t.Fatal(err)
	}
	// a's copy moved on with its own append, so it can append again.
	if err := svc.AppendEvent(ctx, a, ev("a2")); err != nil {
		t.Fatalf("second append through the same copy: %v", err)
	}
	err = svc.AppendEvent(ctx, b, ev("b1"))
	if !errors.Is(err, adksession.ErrStaleSession) || status.Code(err) != codes.Aborted {
		t.Fatalf("append through a stale copy: %v, want ErrStaleSession", err)
	}
	if b.Events().Len() != 0 {
		t.Error("a refused append changed the local copy")
	}
	fresh := get()
	if v, _ := fresh.State().Get("writer"); v != "a2" || fresh.Events().Len() != 2 {
		t.Errorf("stored: writer=%v, %d events", v, fresh.Events().Len())
	}
	if err := svc.AppendEvent(ctx, fresh, ev("b1")); err != nil {
		t.Fatalf("append after reloading: %v", err)
	}

	_, err = svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: "missing"})
	if !errors.Is(err, adksession.ErrNotFound) || status.Code(err) != codes.NotFound {
		t.Errorf("get missing: %v, want ErrNotFound", err)
	}
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: created.Session.ID()})
	if !errors.Is(err, adksession.ErrAlreadyExists) {
		t.Errorf("create taken id: %v, want ErrAlreadyExists", err)
	}
}

// What a Runner relies on between the steps of one invocation.
func TestAppendUpdatesTheCallersCopy(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	app, user := uniq("app"), uniq("user")
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, State: map[string]any{"user:tier": "gold"}})
	if err != nil {
		t.Fatal(err)
	}
	s := created.Session
	e := &session.Event{Author: "agent", InvocationID: "inv-1", Actions: session.EventActions{
		StateDelta: map[string]any{"step": float64(1), "temp:scratch": "x", "user:seen": true},
	}}
	if err := svc.AppendEvent(ctx, s, e); err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || e.Timestamp.IsZero() {
		t.Errorf("server-assigned id %q / timestamp %v not written back", e.ID, e.Timestamp)
	}
	if _, ok := e.Actions.StateDelta["temp:scratch"]; !ok {
		t.Error("the caller's event lost its temp: key; it is the caller's")
	}
	// temp: stays visible to the rest of the invocation, on this copy only.
	if v, err := s.State().Get("temp:scratch"); err != nil || v != "x" {
		t.Errorf("temp:scratch on the local copy = %v, %v", v, err)
	}
	if got := s.Events().At(0); got == nil || got.ID != e.ID {
		t.Fatalf("local events = %v", s.Events())
	} else if _, ok := got.Actions.StateDelta["temp:scratch"]; ok {
		t.Error("the local copy's event kept a temp: key the stored one does not have")
	}
	if !s.LastUpdateTime().Equal(e.Timestamp) {
		t.Errorf("LastUpdateTime %v, want the event's %v", s.LastUpdateTime(), e.Timestamp)
	}

	got, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"step": float64(1), "user:tier": "gold", "user:seen": true}
	state := map[string]any{}
	for k, v := range got.Session.State().All() {
		state[k] = v
	}
	if diff := cmp.Diff(want, state); diff != "" {
		t.Errorf("stored state (-want +got):\n%s", diff)
	}
	us, err := svc.GetUserState(ctx, app, user)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"tier": "gold", "seen": true}, us); diff != "" {
		t.Errorf("user state (-want +got):\n%s", diff)
	}
}

// A retry after a lost response re-sends the same event id: nothing is
// stored twice and the copy does not apply it twice.
func TestRetriedAppendIsIdempotent(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: uniq("app"), UserID: uniq("user")})
	if err != nil {
		t.Fatal(err)
	}
	s := created.Session
	e := &session.Event{ID: "once", Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"n": float64(1)}}}
	for range 2 {
		if err := svc.AppendEvent(ctx, s, e); err != nil {
			t.Fatal(err)
		}
	}
	if s.Events().Len() != 1 {
		t.Errorf("local copy has %d events, want 1", s.Events().Len())
	}
	got, err := svc.Get(ctx, &session.GetRequest{AppName: s.AppName(), UserID: s.UserID(), SessionID: s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if got.Session.Events().Len() != 1 || got.Session.(*adksession.Session).Revision() != 1 {
		t.Errorf("stored %d events at revision %d, want 1 and 1", got.Session.Events().Len(), got.Session.(*adksession.Session).Revision())
	}
}

// A rich model turn survives the server, not only the proto mapping.
func TestEventRoundTripThroughServer(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: uniq("app"), UserID: uniq("user")})
	if err != nil {
		t.Fatal(err)
	}
	s := created.Session
	in := &session.Event{
		ID: "turn-1", InvocationID: "inv-1", Author: "support_agent", Branch: "root.support_agent",
		IsolationScope: "orders",
		Timestamp:      time.Date(2025, 6, 1, 10, 0, 0, 987654321, time.UTC),
		LLMResponse: model.LLMResponse{
			Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "checking", Thought: true, ThoughtSignature: []byte{9, 8, 7}},
				{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "lookup_order", Args: map[string]any{"order_id": "8842"}}},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 0xff}}},
				{ExecutableCode: &genai.ExecutableCode{Language: genai.LanguagePython, Code: "1+1", ID: "x"}},
			}},
			UsageMetadata:  &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 5, TotalTokenCount: 9},
			CustomMetadata: map[string]any{"trace_id": "t-1"},
			FinishReason:   genai.FinishReasonStop,
			AvgLogprobs:    -0.5,
		},
		LongRunningToolIDs: []string{"call-1"},
		Output:             map[string]any{"answer": "shipped"},
		Actions: session.EventActions{
			StateDelta:    map[string]any{"order": "8842"},
			ArtifactDelta: map[string]int64{},
			Escalate:      true,
		},
	}
	if err := svc.AppendEvent(ctx, s, in); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx, &session.GetRequest{AppName: s.AppName(), UserID: s.UserID(), SessionID: s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got.Session.Events().At(0)); diff != "" {
		t.Fatalf("stored event (-sent +read):\n%s", diff)
	}
}

func TestPartialEventsAreNotSent(t *testing.T) {
	// A closed connection would fail any call: a partial event makes none.
	c, err := sessionstore.Dial(t.Context(), srv.URL, sessionstore.WithLazyConnect())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	svc := adksession.New(c)
	e := &session.Event{Author: "agent", LLMResponse: model.LLMResponse{Partial: true}}
	sess := &fakeSession{}
	if err := svc.AppendEvent(t.Context(), sess, e); err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(t.Context(), sess, &session.Event{Author: "agent"}); err == nil {
		t.Fatal("a full event through a closed connection should fail")
	}
}

type fakeSession struct{ session.Session }

func (fakeSession) ID() string      { return "s" }
func (fakeSession) AppName() string { return "a" }
func (fakeSession) UserID() string  { return "u" }

// As adk-go's own services: an empty id comes from the UUID provider on ctx.
func TestCreateTakesAnEmptyIDFromADKsUUIDProvider(t *testing.T) {
	svc := newService(t)
	want := uniq("fixed")
	ctx := platform.WithUUIDProvider(t.Context(), func() string { return want })
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: uniq("app"), UserID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Session.ID() != want {
		t.Fatalf("id = %q, want %q from the provider", created.Session.ID(), want)
	}
}

// The client retries an append whose answer was lost after it committed; the
// caller's copy then holds the event and stays current.
func TestAppendWhoseAnswerWasLostLandsOnceInTheCopy(t *testing.T) {
	ctx := t.Context()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	retried := make(chan struct{}, 1)
	c, err := sessionstore.Dial(ctx, proxy.Addr(), sessionstore.WithRetry(sessionstore.RetryPolicy{
		MaxAttempts: 100, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		OnRetry: func(string, int, error, time.Duration) {
			select {
			case retried <- struct{}{}:
			default:
			}
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	svc, direct := adksession.New(c), newService(t)
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: uniq("app"), UserID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	s := created.Session
	key := &session.GetRequest{AppName: s.AppName(), UserID: s.UserID(), SessionID: s.ID()}
	proxy.HoldAnswers()
	done := make(chan error, 1)
	e := &session.Event{Author: "user"}
	go func() { done <- svc.AppendEvent(ctx, s, e) }()
	for {
		got, err := direct.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Session.Events().Len() == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	proxy.Cut()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-retried
	if s.Events().Len() != 1 || s.Events().At(0).ID != e.ID || e.ID == "" {
		t.Fatalf("copy has %d events; want the one appended (%q)", s.Events().Len(), e.ID)
	}
	if err := svc.AppendEvent(ctx, s, &session.Event{Author: "agent"}); err != nil {
		t.Fatalf("the next append from the copy: %v", err)
	}
	got, err := direct.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Session.Events().Len() != 2 {
		t.Fatalf("stored %d events, want 2", got.Session.Events().Len())
	}
}
