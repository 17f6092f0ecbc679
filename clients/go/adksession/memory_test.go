package adksession_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"sessionstore.dev/clients/go/adksession"
	"sessionstore.dev/clients/go/sessionstore"
)

func newMemory(t *testing.T) *adksession.MemoryService {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := sessionstore.Dial(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return adksession.NewMemory(c)
}

func said(ctx context.Context, author, text string) *session.Event {
	e := session.NewEvent(ctx, "inv-1")
	e.Author = author
	e.LLMResponse = model.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleUser)}
	return e
}

func texts(res *memory.SearchResponse) []string {
	var out []string
	for _, m := range res.Memories {
		for _, p := range m.Content.Parts {
			out = append(out, p.Text)
		}
	}
	return out
}

// The same contract as the Python adapter's tests: a session becomes
// memories once, a later session of the same user finds them, another user
// never does, and a session kept by another session service is sent whole.
func TestMemoryServiceRecallsPerUser(t *testing.T) {
	ctx := t.Context()
	svc := newService(t)
	mem := newMemory(t)
	app := uniq("app")
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	s := created.Session
	for _, e := range []*session.Event{said(ctx, "user", "My sister lives in Valparaiso"), said(ctx, "assistant", "Noted")} {
		if err := svc.AppendEvent(ctx, s, e); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // the second call adds nothing
		if err := mem.AddSessionToMemory(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	res, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: app, UserID: "alice", Query: "where does my sister live"})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res); len(got) != 1 || got[0] != "My sister lives in Valparaiso" {
		t.Fatalf("alice's search = %q, want the one fact", got)
	}
	first := res.Memories[0]
	if first.Author != "user" || first.CustomMetadata["session_id"] != s.ID() || first.ID == "" || first.Timestamp.IsZero() {
		t.Fatalf("entry = %+v, want author, provenance, id and time", first)
	}
	other, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: app, UserID: "bob", Query: "where does my sister live"})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Memories) != 0 {
		t.Fatalf("bob found %q in alice's memory", texts(other))
	}

	elsewhere := session.InMemoryService()
	kept, err := elsewhere.Create(ctx, &session.CreateRequest{AppName: app, UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.AppendEvent(ctx, kept.Session, said(ctx, "user", "My bike is green")); err != nil {
		t.Fatal(err)
	}
	got, err := elsewhere.Get(ctx, &session.GetRequest{AppName: app, UserID: "alice", SessionID: kept.Session.ID()})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := mem.AddSessionToMemory(ctx, got.Session); err != nil {
			t.Fatal(err)
		}
	}
	bike, err := mem.SearchMemory(ctx, &memory.SearchRequest{AppName: app, UserID: "alice", Query: "bike"})
	if err != nil {
		t.Fatal(err)
	}
	if g := texts(bike); len(g) != 1 || g[0] != "My bike is green" {
		t.Fatalf("search for bike = %q", g)
	}
}
