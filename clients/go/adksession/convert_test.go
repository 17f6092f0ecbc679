package adksession

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"
	"google.golang.org/protobuf/proto"

	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// everyField sets every field adk-go v2 has, so a field the mapping drops
// shows up as a diff.
func everyField() *session.Event {
	willContinue := true
	return &session.Event{
		LLMResponse: model.LLMResponse{
			Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "thinking", Thought: true, ThoughtSignature: []byte{0, 1, 2, 255}},
				{Text: "hello", VideoMetadata: &genai.VideoMetadata{FPS: genai.Ptr(2.0)}, PartMetadata: map[string]any{"k": "v"}},
				{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "lookup", Args: map[string]any{"id": "8842", "n": float64(3)}, WillContinue: &willContinue}},
				{FunctionCall: &genai.FunctionCall{Name: "no_args"}},
				{FunctionResponse: &genai.FunctionResponse{
					ID: "c1", Name: "lookup", Response: map[string]any{"status": "shipped"},
					Scheduling: genai.FunctionResponseSchedulingWhenIdle,
					Parts:      []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte("png")}}},
				}},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG\x00\xff"), DisplayName: "receipt.png"}},
				{FileData: &genai.FileData{MIMEType: "application/pdf", FileURI: "gs://b/r.pdf"}},
				{ExecutableCode: &genai.ExecutableCode{Language: genai.LanguagePython, Code: "print(1)", ID: "x1"}},
				{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1\n", ID: "x1"}},
			}},
			CitationMetadata:        &genai.CitationMetadata{Citations: []*genai.Citation{{Title: "t", URI: "https://example.com", StartIndex: 1, EndIndex: 5}}},
			GroundingMetadata:       &genai.GroundingMetadata{WebSearchQueries: []string{"q"}},
			UsageMetadata:           &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 3, CandidatesTokenCount: 4, TotalTokenCount: 7},
			CustomMetadata:          map[string]any{"trace": "abc", "nested": map[string]any{"x": []any{true, nil}}},
			LogprobsResult:          &genai.LogprobsResult{ChosenCandidates: []*genai.LogprobsResultCandidate{{Token: "hi", LogProbability: -0.5}}},
			InputTranscription:      &genai.Transcription{Text: "in", Finished: true},
			OutputTranscription:     &genai.Transcription{Text: "out"},
			ModelVersion:            "gemini-test",
			TurnComplete:            true,
			Interrupted:             true,
			SessionResumptionHandle: "handle-1",
			ErrorCode:               "429",
			ErrorMessage:            "rate limited",
			FinishReason:            genai.FinishReasonStop,
			AvgLogprobs:             -0.25,
		},
		ID:                 "evt-1",
		Timestamp:          time.Date(2025, 12, 1, 8, 0, 0, 123456789, time.UTC),
		InvocationID:       "inv-1",
		Branch:             "root.planner",
		IsolationScope:     "approval",
		Author:             "planner",
		LongRunningToolIDs: []string{"c1"},
		Routes:             []string{"reviewer"},
		RequestedInput:     &session.RequestInput{InterruptID: "i1", Message: "Approve?", Payload: map[string]any{"doc": "a.pdf"}},
		Output:             map[string]any{"summary": "ok"},
		NodeInfo:           &session.NodeInfo{Path: "wf/planner", MessageAsOutput: true, OutputFor: []string{"wf"}},
		Actions: session.EventActions{
			StateDelta:    map[string]any{"stage": "drafted", "user:tier": "gold", "app:n": float64(1), "cleared": nil},
			ArtifactDelta: map[string]int64{"report.pdf": 2},
			RequestedToolConfirmations: map[string]toolconfirmation.ToolConfirmation{
				"c1": {Hint: "really?", Confirmed: true, Payload: map[string]any{"amount": float64(10)}},
			},
			SkipSummarization: true,
			TransferToAgent:   "writer",
			Escalate:          true,
		},
	}
}

// roundTrip goes through the wire format too: what the server stores is the
// binary encoding of the proto.
func roundTrip(t *testing.T, e *session.Event) (*session.Event, *sessionstorev1.Event) {
	t.Helper()
	p, err := EventToProto(e)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var stored sessionstorev1.Event
	if err := proto.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	back, err := EventFromProto(&stored)
	if err != nil {
		t.Fatal(err)
	}
	return back, &stored
}

func TestEventRoundTripKeepsEveryField(t *testing.T) {
	in := everyField()
	out, _ := roundTrip(t, in)
	if diff := cmp.Diff(in, out); diff != "" {
		t.Fatalf("round trip (-in +out):\n%s", diff)
	}
}

func TestEventUsesTypedSlotsAndExtraForTheRest(t *testing.T) {
	_, p := roundTrip(t, everyField())
	if p.GetBranch() != "root.planner" || !p.GetTurnComplete() || p.GetFinishReason() != "STOP" || p.GetModelVersion() != "gemini-test" {
		t.Errorf("typed scalars: %v", p)
	}
	if p.GetUsageMetadata().GetFields()["totalTokenCount"].GetNumberValue() != 7 {
		t.Errorf("usage_metadata = %v", p.GetUsageMetadata())
	}
	wantEventExtra := []string{"avgLogprobs", "inputTranscription", "isolationScope", "logprobsResult", "nodeInfo", "output", "outputTranscription", "requestedInput", "routes", "sessionResumptionHandle"}
	if diff := cmp.Diff(wantEventExtra, sortedKeys(p.GetExtra().AsMap())); diff != "" {
		t.Errorf("event.extra keys (-want +got):\n%s", diff)
	}
	if p.GetActions().GetExtra() != nil {
		t.Errorf("actions.extra = %v, want none: every adk-go action has a slot", p.GetActions().GetExtra())
	}
	parts := p.GetContent().GetParts()
	if got := parts[0]; got.GetText() != "thinking" || !got.GetThought() || len(got.GetThoughtSignature()) != 4 || got.GetExtra() != nil {
		t.Errorf("thought part: %v", got)
	}
	if diff := cmp.Diff([]string{"partMetadata", "videoMetadata"}, sortedKeys(parts[1].GetExtra().AsMap())); diff != "" {
		t.Errorf("part.extra keys (-want +got):\n%s", diff)
	}
	if fc := parts[2].GetFunctionCall(); fc.GetId() != "c1" || fc.GetArgs().GetFields()["id"].GetStringValue() != "8842" ||
		!fc.GetExtra().GetFields()["willContinue"].GetBoolValue() {
		t.Errorf("function call: %v", fc)
	}
	if fc := parts[3].GetFunctionCall(); fc.Id != nil || fc.Args != nil || fc.Extra != nil {
		t.Errorf("bare function call should stay bare: %v", fc)
	}
	if fr := parts[4].GetFunctionResponse(); fr.GetExtra().GetFields()["scheduling"].GetStringValue() != "WHEN_IDLE" {
		t.Errorf("function response: %v", fr)
	}
	if b := parts[5].GetInlineData(); string(b.GetData()) != "\x89PNG\x00\xff" || b.GetDisplayName() != "receipt.png" || parts[5].GetExtra() != nil {
		t.Errorf("inline data: %v", parts[5])
	}
	// ExecutableCode has no extra of its own: its id rides in the part's.
	if x := parts[7]; x.GetExecutableCode().GetCode() != "print(1)" ||
		x.GetExtra().GetFields()["executableCode"].GetStructValue().GetFields()["id"].GetStringValue() != "x1" {
		t.Errorf("executable code: %v", x)
	}
}

func TestEventZeroValuesStayUnset(t *testing.T) {
	in := &session.Event{ID: "e", Author: "user"}
	out, p := roundTrip(t, in)
	if diff := cmp.Diff(in, out); diff != "" {
		t.Fatalf("round trip (-in +out):\n%s", diff)
	}
	if p.Branch != nil || p.Partial != nil || p.Timestamp != nil || p.Actions != nil || p.Content != nil || p.Extra != nil {
		t.Errorf("zero event should be bare: %v", p)
	}
}

// NewEvent allocates empty delta maps and agent code writes into them
// without nil checks; nil and empty must both survive.
func TestEventKeepsNilAndEmptyDeltasApart(t *testing.T) {
	empty := &session.Event{ID: "e", Author: "a", Actions: session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}}}
	out, _ := roundTrip(t, empty)
	if out.Actions.StateDelta == nil || out.Actions.ArtifactDelta == nil {
		t.Errorf("empty maps came back nil: %#v", out.Actions)
	}
	out, _ = roundTrip(t, &session.Event{ID: "e", Author: "a"})
	if out.Actions.StateDelta != nil || out.Actions.ArtifactDelta != nil {
		t.Errorf("nil maps came back allocated: %#v", out.Actions)
	}
}

func TestEventNaNIsAnError(t *testing.T) {
	e := &session.Event{ID: "e", Author: "a", Actions: session.EventActions{StateDelta: map[string]any{"x": genai.Ptr(0.0)}}}
	if _, err := EventToProto(e); err != nil {
		t.Fatalf("pointer to a number is valid JSON: %v", err)
	}
	nan := 0.0
	nan /= nan
	e.Actions.StateDelta["x"] = nan
	if _, err := EventToProto(e); err == nil {
		t.Fatal("NaN in state: want an error, JSON cannot hold it")
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
