package llm

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/google"
)

// toCall converts a Request into fantasy's prompt types.
func toCall(req Request, provider string) (fantasy.Call, error) {
	var call fantasy.Call
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			call.Prompt = append(call.Prompt, fantasy.NewSystemMessage(m.Text))
		case RoleUser:
			call.Prompt = append(call.Prompt, fantasy.NewUserMessage(m.Text))
		case RoleAssistant:
			var parts []fantasy.MessagePart
			if m.Text != "" {
				parts = append(parts, fantasy.TextPart{Text: m.Text})
			}
			for _, tc := range m.ToolCalls {
				if tc.Signature != "" && provider == google.Name {
					// fantasy's google adapter attaches a signature to the
					// function call that follows a reasoning part carrying it.
					parts = append(parts, fantasy.ReasoningPart{ProviderOptions: fantasy.ProviderOptions{
						google.Name: &google.ReasoningMetadata{Signature: tc.Signature, ToolID: tc.ID},
					}})
				}
				parts = append(parts, fantasy.ToolCallPart{
					ToolCallID: tc.ID,
					ToolName:   tc.Name,
					Input:      cmp.Or(tc.Input, "{}"),
				})
			}
			if len(parts) == 0 {
				continue // providers reject empty assistant turns
			}
			call.Prompt = append(call.Prompt, fantasy.Message{Role: fantasy.MessageRoleAssistant, Content: parts})
		case RoleTool:
			parts := make([]fantasy.MessagePart, 0, len(m.ToolResults))
			for _, tr := range m.ToolResults {
				var out fantasy.ToolResultOutputContent = fantasy.ToolResultOutputContentText{Text: tr.Output}
				if tr.IsError {
					out = fantasy.ToolResultOutputContentError{Error: errors.New(tr.Output)}
				}
				parts = append(parts, fantasy.ToolResultPart{ToolCallID: tr.CallID, Output: out})
			}
			call.Prompt = append(call.Prompt, fantasy.Message{Role: fantasy.MessageRoleTool, Content: parts})
		default:
			return call, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return call, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		call.Tools = append(call.Tools, fantasy.FunctionTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.ToolChoice != "" {
		choice := fantasy.ToolChoice(req.ToolChoice) // "auto", "none", "required" or a tool name
		call.ToolChoice = &choice
	}
	if req.MaxOutputTokens > 0 {
		call.MaxOutputTokens = &req.MaxOutputTokens
	}
	call.Temperature = req.Temperature
	return call, nil
}

// inputSchema decodes a tool's JSON Schema into the map fantasy wants.
// fantasy's anthropic and google adapters read "required" only as a
// []string and silently drop the []any that encoding/json produces, so
// every "required" list is turned into []string.
func inputSchema(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	fixRequired(schema)
	return schema, nil
}

func fixRequired(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if list, ok := e.([]any); ok && k == "required" {
				names := make([]string, 0, len(list))
				for _, n := range list {
					if s, ok := n.(string); ok {
						names = append(names, s)
					}
				}
				v[k] = names
				continue
			}
			fixRequired(e)
		}
	case []any:
		for _, e := range v {
			fixRequired(e)
		}
	}
}

// converter maps fantasy's stream parts to Parts, one stream at a time.
type converter struct {
	signatures map[string]string // tool call id → Gemini thought signature
}

// part converts fp; ok is false for parts the caller has no use for
// (block starts and ends, warnings, sources, empty deltas).
func (c *converter) part(fp fantasy.StreamPart) (p Part, ok bool) {
	switch fp.Type {
	case fantasy.StreamPartTypeTextDelta:
		return Part{Type: PartTextDelta, Text: fp.Delta}, fp.Delta != ""
	case fantasy.StreamPartTypeReasoningDelta:
		// Anthropic's signature deltas arrive as empty reasoning deltas.
		return Part{Type: PartReasoningDelta, Text: fp.Delta}, fp.Delta != ""
	case fantasy.StreamPartTypeReasoningEnd:
		// Gemini hands out a function call's thought signature on the
		// reasoning block just before the call.
		if md, ok := fp.ProviderMetadata[google.Name].(*google.ReasoningMetadata); ok && md.ToolID != "" && md.Signature != "" {
			if c.signatures == nil {
				c.signatures = map[string]string{}
			}
			c.signatures[md.ToolID] = md.Signature
		}
		return Part{}, false
	case fantasy.StreamPartTypeToolInputStart:
		return Part{Type: PartToolInputStart, ToolCallID: fp.ID, ToolName: fp.ToolCallName}, !fp.ProviderExecuted
	case fantasy.StreamPartTypeToolInputDelta:
		// OpenAI-style adapters put the fragment in Delta, Anthropic's in
		// ToolCallInput.
		delta := cmp.Or(fp.Delta, fp.ToolCallInput)
		return Part{Type: PartToolInputDelta, ToolCallID: fp.ID, Text: delta}, delta != "" && !fp.ProviderExecuted
	case fantasy.StreamPartTypeToolInputEnd:
		return Part{Type: PartToolInputEnd, ToolCallID: fp.ID}, !fp.ProviderExecuted
	case fantasy.StreamPartTypeToolCall:
		return Part{
			Type:       PartToolCall,
			ToolCallID: fp.ID,
			ToolName:   fp.ToolCallName,
			Input:      cmp.Or(fp.ToolCallInput, "{}"),
			Signature:  c.signatures[fp.ID],
		}, !fp.ProviderExecuted
	case fantasy.StreamPartTypeFinish:
		return Part{Type: PartFinish, Usage: usage(fp.Usage), FinishReason: finishReason(fp.FinishReason)}, true
	}
	return Part{}, false
}

func usage(u fantasy.Usage) Usage {
	return Usage{
		InputTokens:     u.InputTokens,
		OutputTokens:    u.OutputTokens,
		TotalTokens:     cmp.Or(u.TotalTokens, u.InputTokens+u.OutputTokens),
		ReasoningTokens: u.ReasoningTokens,
		CachedTokens:    u.CacheReadTokens,
	}
}

func finishReason(r fantasy.FinishReason) string {
	switch r {
	case fantasy.FinishReasonStop, fantasy.FinishReasonLength, fantasy.FinishReasonToolCalls,
		fantasy.FinishReasonContentFilter, fantasy.FinishReasonError:
		return string(r)
	}
	return string(fantasy.FinishReasonOther)
}

// streamError is an error whose message is ours and whose chain is the
// provider's, so errors.Is(err, context.Canceled) and errors.As to
// *fantasy.ProviderError keep working.
type streamError struct {
	msg string
	err error
}

func (e *streamError) Error() string { return e.msg }
func (e *streamError) Unwrap() error { return e.err }

// describe words err as "provider: 401 Unauthorized: <provider's message>".
func describe(provider string, err error) error {
	cause, attempts := err, 1
	var re *fantasy.RetryError
	if errors.As(err, &re) && len(re.Errors) > 0 {
		cause, attempts = re.Errors[len(re.Errors)-1], len(re.Errors)
	}
	var (
		pe     *fantasy.ProviderError
		syntax *json.SyntaxError
		msg    string
	)
	switch {
	case errors.As(cause, &pe) && pe.StatusCode != 0:
		msg = fmt.Sprintf("%s: %d %s", provider, pe.StatusCode, http.StatusText(pe.StatusCode))
		if r := reason(pe.Message); r != "" {
			msg += ": " + r
		}
	case errors.As(cause, &pe):
		msg = fmt.Sprintf("%s: %s", provider, pe.Error())
	case errors.As(cause, &syntax):
		msg = fmt.Sprintf("%s: malformed data in the response stream: %v", provider, cause)
	default:
		msg = fmt.Sprintf("%s: %v", provider, cause)
	}
	if attempts > 1 {
		msg += fmt.Sprintf(" (gave up after %d attempts)", attempts)
	}
	return &streamError{msg: msg, err: err}
}

// reason digs the provider's own words out of an error message. OpenAI's
// adapter hands over the message alone; Anthropic's hands over
// `POST "url": 401 Unauthorized {"type":"error","error":{"message":…}}`.
func reason(msg string) string {
	msg = strings.TrimSpace(msg)
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return msg
	}
	var body struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(msg[i:]), &body) != nil {
		return msg
	}
	var nested struct {
		Message string `json:"message"`
	}
	var plain string
	switch {
	case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
		return nested.Message
	case json.Unmarshal(body.Error, &plain) == nil && plain != "":
		return plain
	case body.Message != "":
		return body.Message
	}
	return msg
}
