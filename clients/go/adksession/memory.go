package adksession

import (
	"context"
	"fmt"

	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/session"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"sessionstore.dev/clients/go/sessionstore"
	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// maxPerRequest is the server's cap on events per AddEventsToMemory call.
const maxPerRequest = 1000

// MemoryService is an adk-go memory.Service backed by Sessionstore's
// MemoryService: PostgreSQL full-text search over what each user told the
// agent, scoped by (app, user). It behaves like ADK's memory services: an
// event with text becomes one entry, adding a session again adds only new
// events, and entries carry their session and event ids in CustomMetadata.
type MemoryService struct {
	client sessionstorev1.MemoryServiceClient
	// MaxResults is the number of entries a search returns (1 to 100; default 10).
	MaxResults int32
}

var _ memory.Service = (*MemoryService)(nil)

// NewMemory makes a memory.Service on the client's connection:
// runner.Config{MemoryService: adksession.NewMemory(c)}.
func NewMemory(c *sessionstore.Client) *MemoryService {
	return &MemoryService{client: sessionstorev1.NewMemoryServiceClient(c.Conn()), MaxResults: 10}
}

// AddSessionToMemory ingests the session's events. A session stored in
// Sessionstore is read by the server from where the last call stopped; one
// kept by another session service is sent with its events.
func (m *MemoryService) AddSessionToMemory(ctx context.Context, s session.Session) error {
	_, err := m.client.AddSessionToMemory(ctx, &sessionstorev1.AddSessionToMemoryRequest{
		AppName: s.AppName(), UserId: s.UserID(), SessionId: s.ID(),
	})
	if status.Code(err) != codes.NotFound {
		return err
	}
	var batch []*sessionstorev1.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := m.client.AddEventsToMemory(ctx, &sessionstorev1.AddEventsToMemoryRequest{
			AppName: s.AppName(), UserId: s.UserID(), SessionId: s.ID(), Events: batch,
		})
		batch = nil
		return err
	}
	for e := range s.Events().All() {
		if e.Content == nil || len(e.Content.Parts) == 0 || e.Partial {
			continue
		}
		p, err := EventToProto(e)
		if err != nil {
			return fmt.Errorf("event %q: %w", e.ID, err)
		}
		batch = append(batch, p)
		if len(batch) == maxPerRequest {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// SearchMemory answers the user's entries most relevant to the query, best first.
func (m *MemoryService) SearchMemory(ctx context.Context, req *memory.SearchRequest) (*memory.SearchResponse, error) {
	out := &memory.SearchResponse{}
	if req.Query == "" {
		return out, nil
	}
	res, err := m.client.SearchMemory(ctx, &sessionstorev1.SearchMemoryRequest{
		AppName: req.AppName, UserId: req.UserID, Query: req.Query, PageSize: m.MaxResults,
	})
	if err != nil {
		return nil, err
	}
	for _, r := range res.GetResults() {
		entry, err := memoryEntry(r.GetMemory())
		if err != nil {
			return nil, err
		}
		out.Memories = append(out.Memories, entry)
	}
	return out, nil
}

func memoryEntry(p *sessionstorev1.Memory) (memory.Entry, error) {
	content, err := contentFromProto(p.GetContent())
	if err != nil {
		return memory.Entry{}, fmt.Errorf("memory %q: %w", p.GetId(), err)
	}
	metadata := sessionstore.Map(p.GetCustomMetadata())
	if metadata == nil {
		metadata = map[string]any{}
	}
	if p.GetSessionId() != "" {
		metadata["session_id"] = p.GetSessionId()
	}
	if p.GetEventId() != "" {
		metadata["event_id"] = p.GetEventId()
	}
	return memory.Entry{
		ID:             p.GetId(),
		Content:        content,
		Author:         p.GetAuthor(),
		Timestamp:      sessionstore.Time(p.GetTimestamp()),
		CustomMetadata: metadata,
	}, nil
}
