package agentcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SignalType is the category of a signal (spec §4.1).
type SignalType string

const (
	SignalUser         SignalType = "user"
	SignalState        SignalType = "state"
	SignalReactive     SignalType = "reactive"
	SignalNotification SignalType = "notification"
)

// RoleSignal is the role of a stored signal; its message Type is the tag.
const RoleSignal Role = "signal"

// Attr is one XML attribute of a signal. Value is a string, a number, a
// bool or nil (nil attributes are left out of the XML).
type Attr struct {
	Name  string
	Value any
}

// Attrs are a signal's attributes in insertion order: the XML keeps it.
type Attrs []Attr

// Get returns the value of name.
func (a Attrs) Get(name string) (any, bool) {
	for _, x := range a {
		if x.Name == name {
			return x.Value, true
		}
	}
	return nil, false
}

// Merge returns a with b on top: a name in both keeps a's place and takes
// b's value; new names follow in b's order.
func (a Attrs) Merge(b Attrs) Attrs {
	if len(b) == 0 {
		return a
	}
	out := make(Attrs, len(a), len(a)+len(b))
	copy(out, a)
	for _, x := range b {
		found := false
		for i := range out {
			if out[i].Name == x.Name {
				out[i].Value, found = x.Value, true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// MarshalJSON writes an object in insertion order.
func (a Attrs) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(x.Name)
		v, err := json.Marshal(x.Value)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", x.Name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object keeping its key order; values must be
// strings, numbers, booleans or null.
func (a *Attrs) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*a = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("attributes must be an object of strings, numbers, booleans or null")
	}
	var out Attrs
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("attributes: %w", err)
		}
		name, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("attribute %s: %w", name, err)
		}
		switch x := v.(type) {
		case nil, string, bool:
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return fmt.Errorf("attribute %s: %w", name, err)
			}
			v = f
		default:
			return fmt.Errorf("attribute %s must be a string, number, boolean or null, not %T", name, v)
		}
		out = out.Merge(Attrs{{name, v}})
	}
	*a = out
	return nil
}

// Signal is a message sent into a thread from outside the model's turn:
// a user message for a running agent, a state update, a notification, a
// reminder (Mastra's CreatedAgentSignal).
type Signal struct {
	ID         string         `json:"id"`
	Type       SignalType     `json:"type"`
	TagName    string         `json:"tagName"`
	Contents   string         `json:"contents"`
	Attributes Attrs          `json:"attributes,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	CreatedAt  time.Time      `json:"createdAt"`
	AcceptedAt time.Time      `json:"acceptedAt,omitzero"`
	// Transient signals reach the current model call only and are never
	// stored.
	Transient bool `json:"transient,omitempty"`
	// Files are file parts of stored files (FileStore) that go with
	// Contents, as a user message's do (Mastra's contents as parts).
	Files []Part `json:"-"`
}

var xmlName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// NewSignal checks and completes s: legacy types are mapped, the tag name
// defaults by type, names and a given ID are checked, and ID and CreatedAt
// are set.
func NewSignal(s Signal) (Signal, error) {
	switch s.Type {
	case "user-message":
		s.Type, s.TagName = SignalUser, "user"
	case "system-reminder":
		s.Type, s.TagName = SignalReactive, "system-reminder"
	}
	defTag := map[SignalType]string{SignalUser: "user", SignalState: "state", SignalNotification: "notification", SignalReactive: "system-reminder"}
	def, ok := defTag[s.Type]
	if !ok {
		return Signal{}, fmt.Errorf("Invalid signal type: %s. Use a supported signal type and set tagName for custom XML tags.", s.Type)
	}
	if s.TagName == "" {
		s.TagName = def
	}
	if !xmlName.MatchString(s.TagName) {
		return Signal{}, fmt.Errorf("Invalid signal XML tag name: %s", s.TagName)
	}
	for _, a := range s.Attributes {
		if !xmlName.MatchString(a.Name) {
			return Signal{}, fmt.Errorf("Invalid signal XML attribute name: %s", a.Name)
		}
	}
	if s.Type == SignalState && s.Transient {
		return Signal{}, fmt.Errorf("state signals cannot be transient")
	}
	if s.ID != "" && !ValidID(s.ID) {
		// A signal's id becomes its message's: it reaches URLs and the page.
		return Signal{}, fmt.Errorf("Invalid signal id %.40q: use 1 to %d letters, digits, '-' or '_', or leave it out", s.ID, MaxIDLen)
	}
	if s.ID == "" {
		s.ID = NewID()
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = time.Now().UTC()
	}
	return s, nil
}

var (
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
)

// XML renders the signal as the model reads it: attributes without a value
// are left out, values and contents are escaped, and empty contents make a
// self-closing tag.
func (s Signal) XML() string {
	var b strings.Builder
	b.WriteString("<" + s.TagName)
	for _, a := range s.Attributes {
		if a.Value == nil {
			continue
		}
		b.WriteString(" " + a.Name + `="` + attrEscaper.Replace(attrString(a.Value)) + `"`)
	}
	if s.Contents == "" {
		b.WriteString(" />")
		return b.String()
	}
	b.WriteString(">" + textEscaper.Replace(s.Contents) + "</" + s.TagName + ">")
	return b.String()
}

// attrString is JavaScript's String(v) for the values attributes hold.
func attrString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// ModelText is what the model reads: a user signal without attributes is
// the plain text; anything else is its XML.
func (s Signal) ModelText() string {
	if s.Type == SignalUser {
		meaningful := false
		for _, a := range s.Attributes {
			if a.Value != nil {
				meaningful = true
			}
		}
		if !meaningful {
			return s.Contents
		}
	}
	return s.XML()
}

// Message is the signal as stored: role signal, type its tag name, the
// signal's fields under metadata.signal.
func (s Signal) Message(threadID, resourceID string) Message {
	c := TextContent(s.Contents)
	if len(c.Parts) == 0 {
		c.Parts = []Part{{Type: "text", Text: ""}}
	}
	c.Parts = append(c.Parts, s.Files...)
	meta := map[string]any{"id": s.ID, "type": string(s.Type), "tagName": s.TagName, "createdAt": s.CreatedAt}
	if !s.AcceptedAt.IsZero() {
		meta["acceptedAt"] = s.AcceptedAt
	}
	if len(s.Attributes) > 0 {
		meta["attributes"] = s.Attributes
		// JSON objects read back into maps lose their order; the XML
		// (and a provider's prompt cache) must not.
		order := make([]string, len(s.Attributes))
		for i, a := range s.Attributes {
			order[i] = a.Name
		}
		meta["attributeOrder"] = order
	}
	if len(s.Metadata) > 0 {
		meta["metadata"] = s.Metadata
	}
	c.Metadata = map[string]any{"signal": meta}
	return Message{ID: s.ID, ThreadID: threadID, ResourceID: resourceID, Role: RoleSignal, Type: s.TagName, Content: c, CreatedAt: s.CreatedAt}
}

// SignalOf reads a stored signal back from its message; ok is false when
// m is not one.
func SignalOf(m Message) (Signal, bool) {
	if m.Role != RoleSignal {
		return Signal{}, false
	}
	raw, err := json.Marshal(m.Content.Metadata["signal"])
	if err != nil {
		return Signal{}, false
	}
	var s Signal
	if err := json.Unmarshal(raw, &s); err != nil {
		return Signal{}, false
	}
	var order struct {
		AttributeOrder []string `json:"attributeOrder"`
	}
	if json.Unmarshal(raw, &order) == nil && len(order.AttributeOrder) == len(s.Attributes) {
		sorted := make(Attrs, 0, len(s.Attributes))
		for _, name := range order.AttributeOrder {
			if v, ok := s.Attributes.Get(name); ok {
				sorted = append(sorted, Attr{name, v})
			}
		}
		if len(sorted) == len(s.Attributes) {
			s.Attributes = sorted
		}
	}
	s.Contents = m.Content.Text()
	for _, p := range m.Content.Parts {
		if _, ok := p.FileRef(); ok {
			s.Files = append(s.Files, p)
		}
	}
	if s.TagName == "" {
		s.TagName = m.Type
	}
	if s.ID == "" {
		s.ID = m.ID
	}
	return s, true
}
