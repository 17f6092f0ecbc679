// Package adksession implements adk-go's session.Service over a Sessionstore
// server, so Go agents (runner.New(runner.Config{SessionService: ...})) keep
// their sessions in the same store as Python and TypeScript agents.
//
//	c, err := sessionstore.Dial(ctx, "http://127.0.0.1:50051")
//	svc := adksession.New(c)
//
// Sessions returned by the service remember the storage revision they were
// read at; AppendEvent sends it as expected_revision, so a writer holding a
// stale copy gets an error matching ErrStaleSession instead of silently
// interleaving its turn with another writer's.
package adksession

import (
	"context"
	"errors"
	"fmt"
	"math"

	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"sessionstore.dev/clients/go/sessionstore"
	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// Errors returned by the service match these with errors.Is, and keep the
// gRPC status underneath for status.Code.
var (
	// ErrNotFound: the session does not exist, or belongs to another user.
	ErrNotFound = errors.New("session not found")
	// ErrAlreadyExists: Create was given a session id that is taken.
	ErrAlreadyExists = errors.New("session already exists")
	// ErrStaleSession: the session was modified in storage after this copy
	// was read. Get it again and redo the turn.
	ErrStaleSession = errors.New("session was modified in storage")
)

// listPageSize is the server's maximum: adk-go's List is unpaginated, so
// fewer round trips is all that matters.
const listPageSize = 1000

// Service is a session.Service backed by a Sessionstore server. It is safe
// for concurrent use.
type Service struct {
	stub sessionstorev1.SessionServiceClient
}

var _ session.Service = (*Service)(nil)

// New returns a service using stub, typically a *sessionstore.Client.
func New(stub sessionstorev1.SessionServiceClient) *Service {
	return &Service{stub: stub}
}

// Create creates a session. An empty SessionID gets one from adk-go's
// platform.NewUUID(ctx), as adk-go's own services do, so a UUID provider on
// ctx (platform.WithUUIDProvider) applies. Ids are otherwise taken as they
// are: adk-go trims nothing (unlike ADK Python), and the server refuses
// padded ids with INVALID_ARGUMENT.
func (s *Service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req == nil {
		return nil, errors.New("adksession: create: nil request")
	}
	state, err := sessionstore.Struct(req.State)
	if err != nil {
		return nil, fmt.Errorf("adksession: create: state: %w", err)
	}
	sessionID := req.SessionID
	if sessionID == "" {
		sessionID = platform.NewUUID(ctx)
	}
	in := &sessionstorev1.CreateSessionRequest{AppName: req.AppName, UserId: req.UserID, SessionId: &sessionID, State: state}
	resp, err := s.stub.CreateSession(ctx, in)
	if err != nil {
		return nil, wrap("create", req.SessionID, err)
	}
	sess, err := fromProto(resp.GetSession())
	if err != nil {
		return nil, fmt.Errorf("adksession: create: %w", err)
	}
	return &session.CreateResponse{Session: sess}, nil
}

// Get reads a session with the events selected by NumRecentEvents (0: all)
// and After (zero: no bound; inclusive). A missing session is an error
// matching ErrNotFound, as in adk-go's own services.
func (s *Service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req == nil {
		return nil, errors.New("adksession: get: nil request")
	}
	in := &sessionstorev1.GetSessionRequest{
		AppName:        req.AppName,
		UserId:         req.UserID,
		SessionId:      req.SessionID,
		AfterTimestamp: sessionstore.Timestamp(req.After),
	}
	if req.NumRecentEvents > 0 {
		n := int32(min(req.NumRecentEvents, math.MaxInt32))
		in.NumRecentEvents = &n
	}
	resp, err := s.stub.GetSession(ctx, in)
	if err != nil {
		return nil, wrap("get", req.SessionID, err)
	}
	sess, err := fromProto(resp.GetSession())
	if err != nil {
		return nil, fmt.Errorf("adksession: get: %w", err)
	}
	return &session.GetResponse{Session: sess}, nil
}

// List returns every session of the user (every user of the app when
// UserID is empty), without events, oldest update first. It pages through
// the server's listing until the end.
func (s *Service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req == nil {
		return nil, errors.New("adksession: list: nil request")
	}
	out := &session.ListResponse{Sessions: []session.Session{}}
	in := &sessionstorev1.ListSessionsRequest{AppName: req.AppName, UserId: req.UserID, PageSize: listPageSize}
	for {
		resp, err := s.stub.ListSessions(ctx, in)
		if err != nil {
			return nil, wrap("list", "", err)
		}
		for _, p := range resp.GetSessions() {
			sess, err := fromProto(p)
			if err != nil {
				return nil, fmt.Errorf("adksession: list: %w", err)
			}
			out.Sessions = append(out.Sessions, sess)
		}
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		in.PageToken = resp.GetNextPageToken()
	}
}

// Delete removes a session and its events; app and user state stay. A
// missing session is not an error.
func (s *Service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req == nil {
		return errors.New("adksession: delete: nil request")
	}
	_, err := s.stub.DeleteSession(ctx, &sessionstorev1.DeleteSessionRequest{
		AppName: req.AppName, UserId: req.UserID, SessionId: req.SessionID,
	})
	if err != nil {
		return wrap("delete", req.SessionID, err)
	}
	return nil
}

// AppendEvent stores event and applies its state delta in one transaction.
// Partial events are neither stored nor sent. On success event carries the
// id and timestamp the server assigned when they were empty, and, when sess
// came from this service, sess holds the event (without `temp:` keys) and
// its whole delta (with them, for the rest of the invocation), as adk-go's
// own services do.
//
// A session from this service is appended to only if storage is still at
// the revision it was read at (else ErrStaleSession). Any other
// session.Session is appended to by its key alone, with no stale check.
func (s *Service) AppendEvent(ctx context.Context, sess session.Session, event *session.Event) error {
	if sess == nil {
		return errors.New("adksession: append event: nil session")
	}
	if event == nil {
		return errors.New("adksession: append event: nil event")
	}
	if event.Partial {
		return nil
	}
	pe, err := EventToProto(event)
	if err != nil {
		return fmt.Errorf("adksession: append event: %w", err)
	}
	in := &sessionstorev1.AppendEventRequest{
		AppName: sess.AppName(), UserId: sess.UserID(), SessionId: sess.ID(), Event: pe,
	}
	local, _ := sess.(*Session)
	if local != nil {
		rev := local.Revision()
		in.ExpectedRevision = &rev
	}
	resp, err := s.stub.AppendEvent(ctx, in)
	if err != nil {
		return wrap("append event", sess.ID(), err)
	}
	stored := resp.GetEvent()
	event.ID = stored.GetId()
	event.Timestamp = sessionstore.Time(stored.GetTimestamp())
	if local != nil {
		local.appended(event, stored.GetSeq(), sessionstore.Time(resp.GetLastUpdateTime()))
	}
	return nil
}

// GetUserState returns the user's `user:` state, keys without the prefix.
// adk-go's Service has no such method; it is here for parity with Python
// ADK's get_user_state.
func (s *Service) GetUserState(ctx context.Context, appName, userID string) (map[string]any, error) {
	resp, err := s.stub.GetUserState(ctx, &sessionstorev1.GetUserStateRequest{AppName: appName, UserId: userID})
	if err != nil {
		return nil, wrap("get user state", "", err)
	}
	state := sessionstore.Map(resp.GetState())
	if state == nil {
		state = map[string]any{}
	}
	return state, nil
}

func wrap(op, sessionID string, err error) error {
	var kind error
	switch status.Code(err) {
	case codes.NotFound:
		kind = ErrNotFound
	case codes.AlreadyExists:
		kind = ErrAlreadyExists
	case codes.Aborted:
		kind = ErrStaleSession
	}
	where := op
	if sessionID != "" {
		where = fmt.Sprintf("%s %q", op, sessionID)
	}
	if kind != nil {
		return fmt.Errorf("adksession: %s: %w: %w", where, kind, err)
	}
	return fmt.Errorf("adksession: %s: %w", where, err)
}
