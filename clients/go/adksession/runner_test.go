package adksession_test

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"
)

// scriptedModel calls lookup_order when the last message is the user's and
// answers in text once the tool has replied. It records what it was shown.
type scriptedModel struct {
	mu   sync.Mutex
	seen [][]*genai.Content
}

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	m.seen = append(m.seen, req.Contents)
	m.mu.Unlock()
	last := req.Contents[len(req.Contents)-1]
	var resp *model.LLMResponse
	if fr := last.Parts[len(last.Parts)-1].FunctionResponse; fr != nil {
		resp = &model.LLMResponse{Content: genai.NewContentFromText("Order "+fr.Response["order_id"].(string)+" has shipped.", genai.RoleModel)}
	} else {
		resp = &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{ID: "call-" + last.Parts[0].Text[:4], Name: "lookup_order", Args: map[string]any{"order_id": "8842"}}},
		}}}
	}
	resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(len(req.Contents)), TotalTokenCount: 10}
	return func(yield func(*model.LLMResponse, error) bool) { yield(resp, nil) }
}

// An adk-go Runner over the store: two turns through two service instances
// (as two replicas would), the second seeing the first's history and state.
func TestRunnerTurnsThroughTheStore(t *testing.T) {
	app, user, sid := uniq("support"), uniq("user"), "conv-1"
	llm := &scriptedModel{}
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup_order", Description: "Finds an order."},
		func(ctx agent.Context, args struct {
			OrderID string `json:"order_id"`
		}) (map[string]any, error) {
			if err := ctx.State().Set("user:last_order", args.OrderID); err != nil {
				return nil, err
			}
			return map[string]any{"order_id": args.OrderID, "status": "shipped"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	root, err := llmagent.New(llmagent.Config{
		Name: "support_agent", Model: llm, Instruction: "Help with orders.",
		Tools: []tool.Tool{lookup}, OutputKey: "last_answer",
	})
	if err != nil {
		t.Fatal(err)
	}

	turn := func(text string) []*session.Event {
		t.Helper()
		r, err := runner.New(runner.Config{AppName: app, Agent: root, SessionService: newService(t), AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []*session.Event
		for ev, err := range r.Run(t.Context(), user, sid, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("turn %q: %v", text, err)
			}
			out = append(out, ev)
		}
		return out
	}
	first := turn("Where is order 8842?")
	if len(first) == 0 || !strings.Contains(first[len(first)-1].Content.Parts[0].Text, "shipped") {
		t.Fatalf("first turn ended with %+v", first)
	}
	second := turn("Thanks!")
	if len(second) == 0 {
		t.Fatal("second turn produced no events")
	}

	// The model's first call of turn two saw turn one, read back from the store.
	llm.mu.Lock()
	seen := llm.seen[len(llm.seen)-2]
	llm.mu.Unlock()
	var texts []string
	for _, c := range seen {
		for _, p := range c.Parts {
			switch {
			case p.Text != "":
				texts = append(texts, p.Text)
			case p.FunctionCall != nil:
				texts = append(texts, "call:"+p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				texts = append(texts, "response:"+p.FunctionResponse.Name)
			}
		}
	}
	joined := strings.Join(texts, " | ")
	for _, want := range []string{"Where is order 8842?", "call:lookup_order", "response:lookup_order", "Order 8842 has shipped.", "Thanks!"} {
		if !strings.Contains(joined, want) {
			t.Errorf("turn two's prompt lacks %q: %s", want, joined)
		}
	}

	svc := newService(t)
	got, err := svc.Get(t.Context(), &session.GetRequest{AppName: app, UserID: user, SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Session.Events().Len(); n != len(first)+len(second)+2 {
		t.Errorf("stored %d events, want %d (runner events plus the two user messages)", n, len(first)+len(second)+2)
	}
	if v, _ := got.Session.State().Get("user:last_order"); v != "8842" {
		t.Errorf("user:last_order = %v", v)
	}
	if v, _ := got.Session.State().Get("last_answer"); v != "Order 8842 has shipped." {
		t.Errorf("last_answer = %v", v)
	}
}
