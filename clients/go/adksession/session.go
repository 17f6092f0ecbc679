package adksession

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/session"

	"sessionstore.dev/clients/go/sessionstore"
	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// Session is a session read from the server: a snapshot of its state and a
// window of its events at one storage revision, updated in place by the
// service's AppendEvent. It is safe for concurrent use.
type Session struct {
	appName, userID, id string

	mu        sync.RWMutex
	state     map[string]any
	events    []*session.Event
	updatedAt time.Time
	revision  int64
}

var _ session.Session = (*Session)(nil)

func fromProto(p *sessionstorev1.Session) (*Session, error) {
	s := &Session{
		appName:   p.GetAppName(),
		userID:    p.GetUserId(),
		id:        p.GetId(),
		state:     sessionstore.Map(p.GetState()),
		updatedAt: sessionstore.Time(p.GetLastUpdateTime()),
		revision:  p.GetRevision(),
		events:    make([]*session.Event, 0, len(p.GetEvents())),
	}
	if s.state == nil {
		s.state = map[string]any{}
	}
	for _, pe := range p.GetEvents() {
		e, err := EventFromProto(pe)
		if err != nil {
			return nil, fmt.Errorf("session %q: %w", s.id, err)
		}
		s.events = append(s.events, e)
	}
	return s, nil
}

func (s *Session) ID() string      { return s.id }
func (s *Session) AppName() string { return s.appName }
func (s *Session) UserID() string  { return s.userID }

// State is the merged state: session keys, `app:` and `user:` keys, and the
// `temp:` keys of events appended through this copy. Set changes this copy
// only; state reaches storage through an event's StateDelta.
func (s *Session) State() session.State { return &state{s: s} }

// Events are the events read with the session plus those appended through
// this copy, oldest first.
func (s *Session) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events(slices.Clone(s.events))
}

func (s *Session) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updatedAt
}

// Revision is the storage revision this copy reflects: the number of events
// stored in the session when it was read, plus those appended through it.
func (s *Session) Revision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.revision
}

// appended folds a stored event into this copy. seq is the event's place in
// the log; a re-sent event (same id) that this copy already reflects is not
// applied twice, and one stored by someone else past a gap leaves the
// revision behind, so the next append reports the copy as stale.
func (s *Session) appended(e *session.Event, seq int64, updatedAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.revision {
		return
	}
	maps.Copy(s.state, e.Actions.StateDelta)
	s.events = append(s.events, withoutTemp(e))
	if seq == s.revision+1 {
		s.revision = seq
	}
	if updatedAt.After(s.updatedAt) {
		s.updatedAt = updatedAt
	}
}

// withoutTemp is the event as stored: `temp:` keys belong to the invocation,
// not the log. e itself is left alone; the caller may still read it.
func withoutTemp(e *session.Event) *session.Event {
	hasTemp := false
	for k := range e.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			hasTemp = true
			break
		}
	}
	if !hasTemp {
		return e
	}
	c := *e
	c.Actions.StateDelta = maps.Clone(e.Actions.StateDelta)
	maps.DeleteFunc(c.Actions.StateDelta, func(k string, _ any) bool {
		return strings.HasPrefix(k, session.KeyPrefixTemp)
	})
	return &c
}

type state struct{ s *Session }

func (st *state) Get(key string) (any, error) {
	st.s.mu.RLock()
	defer st.s.mu.RUnlock()
	v, ok := st.s.state[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (st *state) Set(key string, value any) error {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	st.s.state[key] = value
	return nil
}

func (st *state) All() iter.Seq2[string, any] {
	st.s.mu.RLock()
	snapshot := maps.Clone(st.s.state)
	st.s.mu.RUnlock()
	return maps.All(snapshot)
}

type events []*session.Event

func (e events) All() iter.Seq[*session.Event] { return slices.Values(e) }
func (e events) Len() int                      { return len(e) }

func (e events) At(i int) *session.Event {
	if i < 0 || i >= len(e) {
		return nil
	}
	return e[i]
}
