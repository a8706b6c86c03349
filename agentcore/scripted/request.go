package scripted

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
)

// Request is a decoded chat-completions request body.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
	Stream   bool      `json:"stream"`
	// Body is the request body as received, for asserting on anything else.
	Body json.RawMessage `json:"-"`
}

// Message is one prompt message. Content holds the text whether it was sent
// as a string or as parts; Parts is set when it was sent as parts.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"-"`
	Parts      []Part     `json:"-"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
	Name       string     `json:"name"`
}

// Part is one part of an array content.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Tool is a tool offered to the model.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function describes a function tool.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// LastUserText is the text of the last message the user wrote, or "".
// User messages the runtime adds (see Injected) are not the user's words.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && !m.Injected() {
			return m.Content
		}
	}
	return ""
}

// LastSaid is the index of the last message that is not the runtime's
// (system messages and Injected user messages), or -1. Its role tells a
// scripted model what it answers: the user's words ("user"), the result of
// its own call ("tool"), or nothing new of anyone's ("assistant": only the
// runtime spoke since, e.g. a notification woke the run).
func (r Request) LastSaid() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		switch m := r.Messages[i]; {
		case m.Role == "system", m.Role == "developer", m.Role == "user" && m.Injected():
		default:
			return i
		}
	}
	return -1
}

// xmlElement is one whole XML element: a name, attributes, and either "/>"
// or text without markup up to its closing tag. Signals, state lanes and
// notifications reach the model so (agentcore's Signal.XML, the task lane),
// their contents escaped.
var xmlElement = regexp.MustCompile(`^<([A-Za-z_][A-Za-z0-9_.-]*)(?:\s[^<>]*)?(?:/>|>([^<]*)</([A-Za-z_][A-Za-z0-9_.-]*)>)$`)

// Injected reports whether a user message is one the runtime added rather
// than words the user wrote: a signal, a state lane (the task list) or a
// notification, which the model reads as one XML element. A user's plain
// message, also one sent to a running agent, is never one.
func (m Message) Injected() bool {
	_, _, ok := m.element()
	return ok
}

// element splits an injected message into its tag and its text contents.
func (m Message) element() (tag, contents string, ok bool) {
	if m.Role != "user" {
		return "", "", false
	}
	sub := xmlElement.FindStringSubmatch(strings.TrimSpace(m.Content))
	if sub == nil || (sub[3] != "" && sub[3] != sub[1]) {
		return "", "", false
	}
	return sub[1], html.UnescapeString(sub[2]), true
}

// HasTool reports whether the request offers a tool named name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// UnmarshalJSON accepts content as a string, an array of parts, or null.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var w struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message(w.plain)
	c := strings.TrimSpace(string(w.Content))
	switch {
	case c == "" || c == "null":
	case c[0] == '"':
		return json.Unmarshal(w.Content, &m.Content)
	case c[0] == '[':
		if err := json.Unmarshal(w.Content, &m.Parts); err != nil {
			return err
		}
		var text strings.Builder
		for _, p := range m.Parts {
			text.WriteString(p.Text)
		}
		m.Content = text.String()
	default:
		return fmt.Errorf("message content: want string or array, got %.20s", c)
	}
	return nil
}

// wireToolCall is a tool call as OpenAI writes it in messages.
type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MarshalJSON writes the OpenAI form {id, type:"function", function:{name, arguments}}.
func (tc ToolCall) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireToolCall{tc.ID, "function", wireFunction{tc.Name, tc.Args}})
}

// UnmarshalJSON reads the OpenAI form.
func (tc *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireToolCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*tc = ToolCall{ID: w.ID, Name: w.Function.Name, Args: w.Function.Arguments}
	return nil
}
