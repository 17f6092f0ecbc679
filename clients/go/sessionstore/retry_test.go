package sessionstore_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"sessionstore.dev/clients/go/internal/faultproxy"
	"sessionstore.dev/clients/go/internal/testserver"
	"sessionstore.dev/clients/go/sessionstore"
	pb "sessionstore.dev/gen/go/sessionstore/v1"
)

// retries records the client's retries and signals the first one.
type retries struct {
	mu      sync.Mutex
	methods []string
	first   chan struct{}
}

func newRetries() *retries { return &retries{first: make(chan struct{})} }

func (r *retries) onRetry(method string, _ int, _ error, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.methods) == 0 {
		close(r.first)
	}
	r.methods = append(r.methods, method)
}

func (r *retries) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.methods...)
}

// patient retries quickly and for as long as the call's deadline allows: the
// server may take a while to come back on a busy machine.
func patient(r *retries) sessionstore.RetryPolicy {
	return sessionstore.RetryPolicy{MaxAttempts: 1 << 20, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 250 * time.Millisecond, OnRetry: r.onRetry}
}

func TestAppendIsRetriedAcrossAServerRestartAndStoredOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	own, err := testserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Error(err)
		}
	})
	app := uniq("app")
	r := newRetries()
	c, err := sessionstore.Dial(ctx, own.URL, sessionstore.WithRetry(patient(r)), sessionstore.WithTimeout(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	created, err := c.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.GetSession().GetId()
	if err := own.Halt(); err != nil {
		t.Fatal(err)
	}

	type result struct {
		resp *pb.AppendEventResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.AppendEvent(ctx, &pb.AppendEventRequest{
			AppName: app, UserId: "u1", SessionId: sid, ExpectedRevision: proto.Int64(0),
			Event: &pb.Event{Author: "user", Content: &pb.Content{Parts: []*pb.Part{{Data: &pb.Part_Text{Text: "hi"}}}}},
		})
		done <- result{resp, err}
	}()
	select {
	case <-r.first: // the first try failed: nothing listens on the port
	case res := <-done:
		t.Fatalf("append ended before any retry: %v, %v", res.resp, res.err)
	}
	if err := own.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if !res.resp.GetStored() || res.resp.GetDuplicate() || uuid.Validate(res.resp.GetEvent().GetId()) != nil {
		t.Fatalf("append = %v; want stored once under a client-made UUID", res.resp)
	}
	got, err := c.GetSession(ctx, &pb.GetSessionRequest{AppName: app, UserId: "u1", SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if evs := got.GetSession().GetEvents(); len(evs) != 1 || evs[0].GetId() != res.resp.GetEvent().GetId() {
		t.Fatalf("stored events = %v; want exactly the one appended", evs)
	}
}

func TestAppendWhoseAnswerWasLostIsStoredOnce(t *testing.T) {
	direct := dial(t)
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
	r := newRetries()
	c, err := sessionstore.Dial(ctx, proxy.Addr(), sessionstore.WithRetry(patient(r)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	app := uniq("app")
	created, err := direct.CreateSession(ctx, &pb.CreateSessionRequest{AppName: app, UserId: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	key := &pb.GetSessionRequest{AppName: app, UserId: "u1", SessionId: created.GetSession().GetId()}
	proxy.HoldAnswers()
	in := &pb.AppendEventRequest{AppName: app, UserId: "u1", SessionId: key.SessionId, ExpectedRevision: proto.Int64(0), Event: &pb.Event{Author: "user"}}
	done := make(chan error, 1)
	var resp *pb.AppendEventResponse
	go func() {
		var err error
		resp, err = c.AppendEvent(ctx, in)
		done <- err
	}()
	for {
		got, err := direct.GetSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetSession().GetRevision() == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	proxy.Cut() // the answer is lost; the client sees UNAVAILABLE and retries
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !resp.GetDuplicate() || resp.GetEvent().GetSeq() != 1 || in.GetEvent().GetId() != "" {
		t.Fatalf("append = %v (request event id %q); want the stored event, duplicate, request untouched", resp, in.GetEvent().GetId())
	}
	seen := r.seen()
	if len(seen) == 0 {
		t.Fatal("no retry: the lost answer did not reach the retry path")
	}
	for _, m := range seen {
		if m != pb.SessionService_AppendEvent_FullMethodName {
			t.Fatalf("retries = %v; want AppendEvent only", seen)
		}
	}
	got, err := direct.GetSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if evs := got.GetSession().GetEvents(); len(evs) != 1 || evs[0].GetId() != resp.GetEvent().GetId() {
		t.Fatalf("stored events = %v; want exactly one", evs)
	}
}

func TestOnlyIdempotentCallsAreRetried(t *testing.T) {
	r := newRetries()
	policy := sessionstore.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, OnRetry: r.onRetry}
	// Nothing listens on port 1.
	c, err := sessionstore.Dial(t.Context(), "127.0.0.1:1", sessionstore.WithLazyConnect(), sessionstore.WithRetry(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CreateSession(t.Context(), &pb.CreateSessionRequest{AppName: "a", UserId: "u1"})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("create: %v, want UNAVAILABLE", err)
	}
	if seen := r.seen(); len(seen) != 0 {
		t.Fatalf("CreateSession was retried: %v", seen)
	}
	_, err = c.GetUserState(t.Context(), &pb.GetUserStateRequest{AppName: "a", UserId: "u1"})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("get user state: %v, want UNAVAILABLE", err)
	}
	want := pb.SessionService_GetUserState_FullMethodName
	if seen := r.seen(); len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Fatalf("retries = %v; want two of GetUserState (three tries)", seen)
	}
}
