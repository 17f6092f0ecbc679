package adksession

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"sessionstore.dev/clients/go/sessionstore"
	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// The mapping between adk-go's Event and the proto Event. Fields with a typed
// slot in the proto go there; every other field goes, in adk-go's own JSON
// form (camelCase keys), into the `extra` Struct of the innermost message
// that has one. The leftovers are found by marshaling a copy with the typed
// fields cleared, so fields a later adk-go or genai release adds are kept
// without a change here.
//
// Zero values of Go fields become unset optionals: Go cannot tell "false"
// from "not set", and Python ADK's None is the closer match.

// EventToProto converts an adk-go event to the proto Event sent to the server.
func EventToProto(e *session.Event) (*sessionstorev1.Event, error) {
	out := &sessionstorev1.Event{
		Id:                 e.ID,
		InvocationId:       e.InvocationID,
		Author:             e.Author,
		Branch:             optString(e.Branch),
		Timestamp:          sessionstore.Timestamp(e.Timestamp),
		Partial:            optBool(e.Partial),
		TurnComplete:       optBool(e.TurnComplete),
		LongRunningToolIds: e.LongRunningToolIDs,
		Interrupted:        optBool(e.Interrupted),
		ErrorCode:          optString(e.ErrorCode),
		ErrorMessage:       optString(e.ErrorMessage),
		FinishReason:       optString(string(e.FinishReason)),
		ModelVersion:       optString(e.ModelVersion),
	}
	var err error
	if out.Content, err = contentToProto(e.Content); err != nil {
		return nil, err
	}
	if out.CustomMetadata, err = structOf("custom_metadata", e.CustomMetadata, e.CustomMetadata == nil); err != nil {
		return nil, err
	}
	if out.UsageMetadata, err = structOf("usage_metadata", e.UsageMetadata, e.UsageMetadata == nil); err != nil {
		return nil, err
	}
	if out.GroundingMetadata, err = structOf("grounding_metadata", e.GroundingMetadata, e.GroundingMetadata == nil); err != nil {
		return nil, err
	}
	if out.CitationMetadata, err = structOf("citation_metadata", e.CitationMetadata, e.CitationMetadata == nil); err != nil {
		return nil, err
	}
	if out.Actions, err = actionsToProto(&e.Actions); err != nil {
		return nil, err
	}

	rest := *e
	rest.ID, rest.InvocationID, rest.Author, rest.Branch = "", "", "", ""
	rest.Timestamp = time.Time{}
	rest.LongRunningToolIDs = nil
	rest.Actions = session.EventActions{}
	r := &rest.LLMResponse
	r.Content, r.CustomMetadata, r.UsageMetadata, r.GroundingMetadata, r.CitationMetadata = nil, nil, nil, nil, nil
	r.Partial, r.TurnComplete, r.Interrupted = false, false, false
	r.ErrorCode, r.ErrorMessage, r.FinishReason, r.ModelVersion = "", "", "", ""
	// These keys are written even when empty (no omitempty in adk-go).
	if out.Extra, err = leftovers("event", rest, nil, "id", "timestamp", "invocationId", "author", "actions"); err != nil {
		return nil, err
	}
	return out, nil
}

// EventFromProto converts a stored proto Event back to an adk-go event.
func EventFromProto(p *sessionstorev1.Event) (*session.Event, error) {
	e := &session.Event{}
	if err := sessionstore.StructInto(p.GetExtra(), e); err != nil {
		return nil, fmt.Errorf("event %q: extra: %w", p.GetId(), err)
	}
	e.ID = p.GetId()
	e.Timestamp = sessionstore.Time(p.GetTimestamp())
	e.InvocationID = p.GetInvocationId()
	e.Author = p.GetAuthor()
	e.Branch = p.GetBranch()
	e.LongRunningToolIDs = p.GetLongRunningToolIds()
	e.Partial = p.GetPartial()
	e.TurnComplete = p.GetTurnComplete()
	e.Interrupted = p.GetInterrupted()
	e.ErrorCode = p.GetErrorCode()
	e.ErrorMessage = p.GetErrorMessage()
	e.FinishReason = genai.FinishReason(p.GetFinishReason())
	e.ModelVersion = p.GetModelVersion()
	e.CustomMetadata = sessionstore.Map(p.GetCustomMetadata())

	var err error
	if e.Content, err = contentFromProto(p.GetContent()); err != nil {
		return nil, fmt.Errorf("event %q: %w", p.GetId(), err)
	}
	if e.UsageMetadata, err = decodeStruct[genai.GenerateContentResponseUsageMetadata](p.GetUsageMetadata()); err != nil {
		return nil, fmt.Errorf("event %q: usage_metadata: %w", p.GetId(), err)
	}
	if e.GroundingMetadata, err = decodeStruct[genai.GroundingMetadata](p.GetGroundingMetadata()); err != nil {
		return nil, fmt.Errorf("event %q: grounding_metadata: %w", p.GetId(), err)
	}
	if e.CitationMetadata, err = decodeStruct[genai.CitationMetadata](p.GetCitationMetadata()); err != nil {
		return nil, fmt.Errorf("event %q: citation_metadata: %w", p.GetId(), err)
	}
	if err := actionsFromProto(p.GetActions(), &e.Actions); err != nil {
		return nil, fmt.Errorf("event %q: actions: %w", p.GetId(), err)
	}
	return e, nil
}

func actionsToProto(a *session.EventActions) (*sessionstorev1.EventActions, error) {
	out := &sessionstorev1.EventActions{
		ArtifactDelta:     maps.Clone(a.ArtifactDelta),
		TransferToAgent:   optString(a.TransferToAgent),
		Escalate:          optBool(a.Escalate),
		SkipSummarization: optBool(a.SkipSummarization),
	}
	var err error
	if out.StateDelta, err = structOf("state_delta", a.StateDelta, a.StateDelta == nil); err != nil {
		return nil, err
	}
	if out.RequestedToolConfirmations, err = structOf("requested_tool_confirmations", a.RequestedToolConfirmations, a.RequestedToolConfirmations == nil); err != nil {
		return nil, err
	}
	rest := *a
	rest.StateDelta, rest.ArtifactDelta, rest.RequestedToolConfirmations = nil, nil, nil
	rest.TransferToAgent, rest.Escalate, rest.SkipSummarization = "", false, false
	// A proto map cannot say "allocated but empty", and adk-go needs that
	// kept: NewEvent allocates the map and code writes into it unchecked.
	// adk-go's JSON writes {} for exactly this case, so the marker is too.
	var marker map[string]json.RawMessage
	if a.ArtifactDelta != nil && len(a.ArtifactDelta) == 0 {
		marker = map[string]json.RawMessage{"artifactDelta": json.RawMessage(`{}`)}
	}
	if out.Extra, err = leftovers("actions", rest, marker); err != nil {
		return nil, err
	}
	if proto.Equal(out, &sessionstorev1.EventActions{}) {
		return nil, nil
	}
	return out, nil
}

func actionsFromProto(p *sessionstorev1.EventActions, a *session.EventActions) error {
	if p == nil {
		return nil
	}
	if err := sessionstore.StructInto(p.GetExtra(), a); err != nil {
		return err
	}
	a.StateDelta = sessionstore.Map(p.GetStateDelta())
	if len(p.GetArtifactDelta()) > 0 {
		a.ArtifactDelta = p.GetArtifactDelta()
	}
	a.TransferToAgent = p.GetTransferToAgent()
	a.Escalate = p.GetEscalate()
	a.SkipSummarization = p.GetSkipSummarization()
	if p.GetRequestedToolConfirmations() != nil {
		a.RequestedToolConfirmations = map[string]toolconfirmation.ToolConfirmation{}
		if err := sessionstore.StructInto(p.GetRequestedToolConfirmations(), &a.RequestedToolConfirmations); err != nil {
			return fmt.Errorf("requested_tool_confirmations: %w", err)
		}
	}
	return nil
}

func contentToProto(c *genai.Content) (*sessionstorev1.Content, error) {
	if c == nil {
		return nil, nil
	}
	out := &sessionstorev1.Content{Role: optString(c.Role)}
	for i, part := range c.Parts {
		p, err := partToProto(part)
		if err != nil {
			return nil, fmt.Errorf("content.parts[%d]: %w", i, err)
		}
		out.Parts = append(out.Parts, p)
	}
	rest := *c
	rest.Parts, rest.Role = nil, ""
	var err error
	if out.Extra, err = leftovers("content", rest, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func contentFromProto(p *sessionstorev1.Content) (*genai.Content, error) {
	if p == nil {
		return nil, nil
	}
	c := &genai.Content{}
	if err := sessionstore.StructInto(p.GetExtra(), c); err != nil {
		return nil, fmt.Errorf("content.extra: %w", err)
	}
	c.Role = p.GetRole()
	for i, pp := range p.GetParts() {
		part, err := partFromProto(pp)
		if err != nil {
			return nil, fmt.Errorf("content.parts[%d]: %w", i, err)
		}
		c.Parts = append(c.Parts, part)
	}
	return c, nil
}

func partToProto(p *genai.Part) (*sessionstorev1.Part, error) {
	out := &sessionstorev1.Part{}
	if p == nil {
		return out, nil
	}
	rest := *p
	// Blob, FileData, ExecutableCode and CodeExecutionResult have no extra of
	// their own: what they hold beyond their typed fields rides in the
	// part's extra under the same key, and is merged back on the way in.
	nested := map[string]json.RawMessage{}
	var err error
	switch {
	case p.FunctionCall != nil:
		fc, err := functionCallToProto(p.FunctionCall)
		if err != nil {
			return nil, err
		}
		out.Data = &sessionstorev1.Part_FunctionCall{FunctionCall: fc}
		rest.FunctionCall = nil
	case p.FunctionResponse != nil:
		fr, err := functionResponseToProto(p.FunctionResponse)
		if err != nil {
			return nil, err
		}
		out.Data = &sessionstorev1.Part_FunctionResponse{FunctionResponse: fr}
		rest.FunctionResponse = nil
	case p.InlineData != nil:
		b := p.InlineData
		out.Data = &sessionstorev1.Part_InlineData{InlineData: &sessionstorev1.Blob{
			MimeType: b.MIMEType, Data: b.Data, DisplayName: optString(b.DisplayName),
		}}
		rest.InlineData = nil
		bRest := *b
		bRest.MIMEType, bRest.Data, bRest.DisplayName = "", nil, ""
		err = nestedLeftovers(nested, "inlineData", bRest)
	case p.FileData != nil:
		f := p.FileData
		out.Data = &sessionstorev1.Part_FileData{FileData: &sessionstorev1.FileData{
			MimeType: f.MIMEType, FileUri: f.FileURI, DisplayName: optString(f.DisplayName),
		}}
		rest.FileData = nil
		fRest := *f
		fRest.MIMEType, fRest.FileURI, fRest.DisplayName = "", "", ""
		err = nestedLeftovers(nested, "fileData", fRest)
	case p.ExecutableCode != nil:
		x := p.ExecutableCode
		out.Data = &sessionstorev1.Part_ExecutableCode{ExecutableCode: &sessionstorev1.ExecutableCode{
			Language: string(x.Language), Code: x.Code,
		}}
		rest.ExecutableCode = nil
		xRest := *x
		xRest.Language, xRest.Code = "", ""
		err = nestedLeftovers(nested, "executableCode", xRest)
	case p.CodeExecutionResult != nil:
		r := p.CodeExecutionResult
		out.Data = &sessionstorev1.Part_CodeExecutionResult{CodeExecutionResult: &sessionstorev1.CodeExecutionResult{
			Outcome: string(r.Outcome), Output: optString(r.Output),
		}}
		rest.CodeExecutionResult = nil
		rRest := *r
		rRest.Outcome, rRest.Output = "", ""
		err = nestedLeftovers(nested, "codeExecutionResult", rRest)
	case p.Text != "":
		out.Data = &sessionstorev1.Part_Text{Text: p.Text}
		rest.Text = ""
	}
	if err != nil {
		return nil, err
	}
	out.Thought = optBool(p.Thought)
	out.ThoughtSignature = p.ThoughtSignature
	rest.Thought, rest.ThoughtSignature = false, nil
	if out.Extra, err = leftovers("part", rest, nested); err != nil {
		return nil, err
	}
	return out, nil
}

func partFromProto(pp *sessionstorev1.Part) (*genai.Part, error) {
	p := &genai.Part{}
	if err := sessionstore.StructInto(pp.GetExtra(), p); err != nil {
		return nil, fmt.Errorf("extra: %w", err)
	}
	switch d := pp.GetData().(type) {
	case *sessionstorev1.Part_Text:
		p.Text = d.Text
	case *sessionstorev1.Part_FunctionCall:
		fc, err := functionCallFromProto(d.FunctionCall)
		if err != nil {
			return nil, err
		}
		p.FunctionCall = fc
	case *sessionstorev1.Part_FunctionResponse:
		fr, err := functionResponseFromProto(d.FunctionResponse)
		if err != nil {
			return nil, err
		}
		p.FunctionResponse = fr
	case *sessionstorev1.Part_InlineData:
		if p.InlineData == nil {
			p.InlineData = &genai.Blob{}
		}
		p.InlineData.MIMEType = d.InlineData.GetMimeType()
		p.InlineData.Data = d.InlineData.GetData()
		p.InlineData.DisplayName = d.InlineData.GetDisplayName()
	case *sessionstorev1.Part_FileData:
		if p.FileData == nil {
			p.FileData = &genai.FileData{}
		}
		p.FileData.MIMEType = d.FileData.GetMimeType()
		p.FileData.FileURI = d.FileData.GetFileUri()
		p.FileData.DisplayName = d.FileData.GetDisplayName()
	case *sessionstorev1.Part_ExecutableCode:
		if p.ExecutableCode == nil {
			p.ExecutableCode = &genai.ExecutableCode{}
		}
		p.ExecutableCode.Language = genai.Language(d.ExecutableCode.GetLanguage())
		p.ExecutableCode.Code = d.ExecutableCode.GetCode()
	case *sessionstorev1.Part_CodeExecutionResult:
		if p.CodeExecutionResult == nil {
			p.CodeExecutionResult = &genai.CodeExecutionResult{}
		}
		p.CodeExecutionResult.Outcome = genai.Outcome(d.CodeExecutionResult.GetOutcome())
		p.CodeExecutionResult.Output = d.CodeExecutionResult.GetOutput()
	}
	if pp.Thought != nil {
		p.Thought = pp.GetThought()
	}
	if pp.ThoughtSignature != nil {
		p.ThoughtSignature = pp.GetThoughtSignature()
	}
	return p, nil
}

func functionCallToProto(fc *genai.FunctionCall) (*sessionstorev1.FunctionCall, error) {
	out := &sessionstorev1.FunctionCall{Id: optString(fc.ID), Name: fc.Name}
	var err error
	if out.Args, err = structOf("function_call.args", fc.Args, fc.Args == nil); err != nil {
		return nil, err
	}
	rest := *fc
	rest.ID, rest.Name, rest.Args = "", "", nil
	if out.Extra, err = leftovers("function_call", rest, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func functionCallFromProto(p *sessionstorev1.FunctionCall) (*genai.FunctionCall, error) {
	fc := &genai.FunctionCall{}
	if err := sessionstore.StructInto(p.GetExtra(), fc); err != nil {
		return nil, fmt.Errorf("function_call.extra: %w", err)
	}
	fc.ID = p.GetId()
	fc.Name = p.GetName()
	fc.Args = sessionstore.Map(p.GetArgs())
	return fc, nil
}

func functionResponseToProto(fr *genai.FunctionResponse) (*sessionstorev1.FunctionResponse, error) {
	out := &sessionstorev1.FunctionResponse{Id: optString(fr.ID), Name: fr.Name}
	var err error
	if out.Response, err = structOf("function_response.response", fr.Response, fr.Response == nil); err != nil {
		return nil, err
	}
	rest := *fr
	rest.ID, rest.Name, rest.Response = "", "", nil
	if out.Extra, err = leftovers("function_response", rest, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func functionResponseFromProto(p *sessionstorev1.FunctionResponse) (*genai.FunctionResponse, error) {
	fr := &genai.FunctionResponse{}
	if err := sessionstore.StructInto(p.GetExtra(), fr); err != nil {
		return nil, fmt.Errorf("function_response.extra: %w", err)
	}
	fr.ID = p.GetId()
	fr.Name = p.GetName()
	fr.Response = sessionstore.Map(p.GetResponse())
	return fr, nil
}

// structOf converts v to a Struct, keeping nil as "absent". isNil is passed
// in because a typed nil pointer or map inside an interface is not == nil.
func structOf(field string, v any, isNil bool) (*structpb.Struct, error) {
	if isNil {
		return nil, nil
	}
	s, err := sessionstore.StructFrom(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return s, nil
}

func decodeStruct[T any](s *structpb.Struct) (*T, error) {
	if s == nil {
		return nil, nil
	}
	v := new(T)
	if err := sessionstore.StructInto(s, v); err != nil {
		return nil, err
	}
	return v, nil
}

// leftovers marshals rest (a copy with its typed fields cleared) and returns
// the keys left, without drop, plus extra, as a Struct; nil when none.
func leftovers(what string, rest any, extra map[string]json.RawMessage, drop ...string) (*structpb.Struct, error) {
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, k := range drop {
		delete(m, k)
	}
	maps.Copy(m, extra)
	if len(m) == 0 {
		return nil, nil
	}
	if b, err = json.Marshal(m); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: extra: %w", what, err)
	}
	return s, nil
}

func nestedLeftovers(into map[string]json.RawMessage, key string, rest any) error {
	b, err := json.Marshal(rest)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if string(b) != "{}" {
		into[key] = b
	}
	return nil
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optBool(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}
