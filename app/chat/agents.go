package chat

// The user's own agents (Settings → Agents). Each is a profile over the
// built-in agent: its own name, description and instructions, a default
// model, the built-in tools it may use, approval policies of its own and
// the mode its chats start in. A chat keeps its agent in its metadata
// (Settings.Agent); runs of the chat are prepared from it (Prepare), the
// approval gate applies its policies, and the Mastra API serves it as an
// agent of its own (Runnable).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"parley/agentcore"
	"parley/toolkit"
)

// AgentKey is the request-context key naming the agent a run is for: the
// approval gate and the working memory read it.
const AgentKey = "agent"

// Limits of an agent's fields: a name fits a header, instructions fit a
// prompt many times over without crowding out the chat.
const (
	MaxAgentName         = 80
	MaxAgentDescription  = 500
	MaxAgentInstructions = 64 << 10
	maxAgentModel        = 200
	// MaxAgentImport bounds an agent file read for import: far above any
	// real agent, low enough to read whole.
	MaxAgentImport = 16 << 20
)

// AgentFileFormat and AgentFileVersion mark an exported agent file.
const (
	AgentFileFormat  = "parley-agent"
	AgentFileVersion = 1
)

// AgentDef is one of the user's agents.
type AgentDef struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Instructions string `json:"instructions"`
	// Model is the provider/model its chats start on; "": Parley's default.
	Model string `json:"model,omitempty"`
	// Tools are the built-in tools it may use (sorted); none: it only talks.
	Tools []string `json:"tools"`
	// Policies are its approval policies per tool category (PolicyAllow,
	// PolicyAsk, PolicyDeny); a category it leaves out follows Settings.
	Policies map[string]string `json:"policies,omitempty"`
	// Mode is the mode its chats start in.
	Mode Mode `json:"mode"`
}

// AgentError is an agent that cannot be saved or imported, naming the
// field at fault.
type AgentError struct {
	Field string // "name", "tools", …; "" for the file as a whole
	Msg   string
}

func (e *AgentError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func fieldErr(field, format string, a ...any) error {
	return &AgentError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// AgentStore keeps the agents' definitions (storage.DB).
type AgentStore interface {
	AgentDefinitions(ctx context.Context) ([]json.RawMessage, error)
	AgentDefinition(ctx context.Context, id string) (json.RawMessage, error)
	PutAgentDefinition(ctx context.Context, id string, def json.RawMessage) error
	DeleteAgentDefinition(ctx context.Context, id string) error
}

// Agents are the user's agents beside the built-in one.
type Agents struct {
	store    AgentStore
	builtin  *agentcore.Agent
	category func(tool string) string
	mu       sync.Mutex // one create, rename or import at a time: ids and names stay unique
}

// NewAgents returns the user's agents over store, beside builtin (whose
// tools they choose from). category names a tool's approval category.
func NewAgents(store AgentStore, builtin *agentcore.Agent, category func(tool string) string) *Agents {
	if category == nil {
		category = toolkit.Category
	}
	return &Agents{store: store, builtin: builtin, category: category}
}

// Builtin is the built-in agent: always there, the default, not editable.
func (a *Agents) Builtin() *agentcore.Agent { return a.builtin }

// IsBuiltin reports whether id names the built-in agent ("" does).
func (a *Agents) IsBuiltin(id string) bool { return id == "" || id == a.builtin.ID }

// ToolNames are the tools an agent may be given: the built-in agent's own,
// sorted. The working memory's tool is not among them: Settings → Memory
// turns it on or off.
func (a *Agents) ToolNames() []string {
	names := make([]string, 0, len(a.builtin.Tools))
	for n := range a.builtin.Tools {
		if n != toolkit.UpdateWorkingMemoryName {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Category is a tool's approval category.
func (a *Agents) Category(tool string) string { return a.category(tool) }

// Categories are the approval categories, in Settings' order.
func Categories() []string { return slices.Clone(categories) }

// List is the user's agents, oldest first. One whose stored definition
// cannot be read is left out.
func (a *Agents) List(ctx context.Context) ([]AgentDef, error) {
	raws, err := a.store.AgentDefinitions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AgentDef, 0, len(raws))
	for _, raw := range raws {
		var d AgentDef
		if json.Unmarshal(raw, &d) == nil && d.ID != "" {
			out = append(out, d)
		}
	}
	return out, nil
}

// Get is the agent id; agentcore.ErrNotFound when there is none (the
// built-in agent is not one of the user's).
func (a *Agents) Get(ctx context.Context, id string) (AgentDef, error) {
	if a.IsBuiltin(id) {
		return AgentDef{}, fmt.Errorf("agent %s: %w", id, agentcore.ErrNotFound)
	}
	raw, err := a.store.AgentDefinition(ctx, id)
	if err != nil {
		return AgentDef{}, err
	}
	var d AgentDef
	if err := json.Unmarshal(raw, &d); err != nil {
		return AgentDef{}, fmt.Errorf("read agent %s: %w", id, err)
	}
	return d, nil
}

// Create stores a new agent made from d (its id is issued here) and
// returns it as stored.
func (a *Agents) Create(ctx context.Context, d AgentDef) (AgentDef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	list, err := a.List(ctx)
	if err != nil {
		return AgentDef{}, err
	}
	if err := a.check(&d, list, ""); err != nil {
		return AgentDef{}, err
	}
	d.ID = a.newID(d.Name, list)
	return d, a.put(ctx, d)
}

// Update replaces the agent d.ID with d.
func (a *Agents) Update(ctx context.Context, d AgentDef) (AgentDef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.IsBuiltin(d.ID) {
		return AgentDef{}, errors.New("the built-in agent cannot be changed; duplicate it to make one of your own")
	}
	if _, err := a.Get(ctx, d.ID); err != nil {
		return AgentDef{}, err
	}
	list, err := a.List(ctx)
	if err != nil {
		return AgentDef{}, err
	}
	if err := a.check(&d, list, d.ID); err != nil {
		return AgentDef{}, err
	}
	return d, a.put(ctx, d)
}

// Duplicate stores a copy of the agent id (the built-in one too: its
// instructions, tools and model) under a new id and a name of its own.
func (a *Agents) Duplicate(ctx context.Context, id string) (AgentDef, error) {
	var d AgentDef
	if a.IsBuiltin(id) {
		d = a.BuiltinDef()
	} else {
		var err error
		if d, err = a.Get(ctx, id); err != nil {
			return AgentDef{}, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	list, err := a.List(ctx)
	if err != nil {
		return AgentDef{}, err
	}
	d.Name = a.freeName(clipRunes(d.Name, MaxAgentName-8)+" (copy)", list)
	d.Policies = maps.Clone(d.Policies)
	d.Tools = slices.Clone(d.Tools)
	if err := a.check(&d, list, ""); err != nil {
		return AgentDef{}, err
	}
	d.ID = a.newID(d.Name, list)
	return d, a.put(ctx, d)
}

// Delete removes the agent id. Its chats go on with the built-in agent.
func (a *Agents) Delete(ctx context.Context, id string) error {
	if a.IsBuiltin(id) {
		return errors.New("the built-in agent cannot be deleted")
	}
	return a.store.DeleteAgentDefinition(ctx, id)
}

// BuiltinDef is the built-in agent as a definition (to view or duplicate).
func (a *Agents) BuiltinDef() AgentDef {
	var text []string
	for _, m := range a.builtin.Instructions {
		text = append(text, m.Content)
	}
	return AgentDef{
		ID: a.builtin.ID, Name: a.builtin.Name, Description: a.builtin.Description,
		Instructions: strings.Join(text, "\n\n"), Tools: a.ToolNames(), Mode: ModeBuild,
	}
}

func (a *Agents) put(ctx context.Context, d AgentDef) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode agent %s: %w", d.ID, err)
	}
	return a.store.PutAgentDefinition(ctx, d.ID, b)
}

// check validates d and puts it in its stored form (trimmed, tools sorted,
// the mode set). others are the stored agents; self is d's own id when it
// is one of them.
func (a *Agents) check(d *AgentDef, others []AgentDef, self string) error {
	d.Name = strings.TrimSpace(d.Name)
	switch n := utf8.RuneCountInString(d.Name); {
	case !utf8.ValidString(d.Name):
		return fieldErr("name", "is not valid UTF-8 text")
	case n == 0:
		return fieldErr("name", "give the agent a name")
	case n > MaxAgentName:
		return fieldErr("name", "%d characters is too long (at most %d)", n, MaxAgentName)
	case strings.ContainsFunc(d.Name, unicode.IsControl):
		return fieldErr("name", "must be one line of text")
	case strings.EqualFold(d.Name, a.builtin.Name):
		return fieldErr("name", "%q is the built-in agent's name; pick another", d.Name)
	}
	for _, o := range others {
		if o.ID != self && strings.EqualFold(o.Name, d.Name) {
			return fieldErr("name", "an agent named %q exists already", o.Name)
		}
	}
	d.Description = strings.TrimSpace(d.Description)
	switch n := utf8.RuneCountInString(d.Description); {
	case !utf8.ValidString(d.Description):
		return fieldErr("description", "is not valid UTF-8 text")
	case n > MaxAgentDescription:
		return fieldErr("description", "%d characters is too long (at most %d)", n, MaxAgentDescription)
	}
	d.Instructions = strings.TrimSpace(d.Instructions)
	switch {
	case !utf8.ValidString(d.Instructions):
		return fieldErr("instructions", "is not valid UTF-8 text")
	case d.Instructions == "":
		return fieldErr("instructions", "write what the agent is for and how it should work")
	case len(d.Instructions) > MaxAgentInstructions:
		return fieldErr("instructions", "%s is too long (at most %s)", size(len(d.Instructions)), size(MaxAgentInstructions))
	}
	d.Model = strings.TrimSpace(d.Model)
	if d.Model != "" {
		provider, model, ok := strings.Cut(d.Model, "/")
		if !ok || provider == "" || model == "" || len(d.Model) > maxAgentModel || strings.ContainsFunc(d.Model, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			return fieldErr("model", "%q is not a provider/model name (e.g. openai/gpt-4.1)", clipRunes(d.Model, 60))
		}
	}
	known := a.ToolNames()
	tools := make([]string, 0, len(d.Tools))
	for _, t := range d.Tools {
		if !slices.Contains(known, t) {
			return fieldErr("tools", "%q is not one of Parley's tools", clipRunes(t, 60))
		}
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	slices.Sort(tools)
	d.Tools = tools
	for cat, p := range d.Policies {
		if !slices.Contains(categories, cat) {
			return fieldErr("policies", "%q is not a tool category (want one of %s)", clipRunes(cat, 60), strings.Join(categories, ", "))
		}
		if p != PolicyAllow && p != PolicyAsk && p != PolicyDeny {
			return fieldErr("policies", "%s: %q is not a policy (want %s, %s or %s)", cat, clipRunes(p, 60), PolicyAllow, PolicyAsk, PolicyDeny)
		}
	}
	if len(d.Policies) == 0 {
		d.Policies = nil
	}
	if d.Mode == "" {
		d.Mode = ModeBuild
	}
	if _, err := ParseMode(string(d.Mode)); err != nil {
		return fieldErr("mode", "%q is not a mode (want %s or %s)", clipRunes(string(d.Mode), 60), ModeBuild, ModePlan)
	}
	return nil
}

// newID is an id for an agent named name: readable, as it is typed in
// the Mastra API and CLI (`mastra api agent run <id>`), made of letters,
// digits and dashes, and unused.
func (a *Agents) newID(name string, others []AgentDef) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			if b.Len() >= 40 {
				break
			}
			continue
		}
		dash = true
	}
	base := b.String()
	if base == "" {
		base = "agent"
	}
	taken := func(id string) bool {
		return a.IsBuiltin(id) || slices.Contains(reservedAgentIDs, id) || slices.ContainsFunc(others, func(o AgentDef) bool { return o.ID == id })
	}
	id := base
	for n := 2; taken(id); n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	return id
}

// reservedAgentIDs are words of Settings' addresses (/settings/agents/new,
// …/import): no agent is given one as its id.
var reservedAgentIDs = []string{"new", "import"}

// freeName is name, or name (2), (3)… when an agent has it already.
func (a *Agents) freeName(name string, others []AgentDef) string {
	taken := func(n string) bool {
		return strings.EqualFold(n, a.builtin.Name) || slices.ContainsFunc(others, func(o AgentDef) bool { return strings.EqualFold(o.Name, n) })
	}
	out := name
	for n := 2; taken(out); n++ {
		out = fmt.Sprintf("%s (%d)", name, n)
	}
	return out
}

// agentFile is the shape of an exported agent.
type agentFile struct {
	Format   string     `json:"format"`
	Version  int        `json:"version"`
	Exported string     `json:"exported,omitempty"`
	Agent    *agentBody `json:"agent"`
}

// agentBody is an agent in a file: no id (an import issues its own).
type agentBody struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	Instructions string            `json:"instructions"`
	Model        string            `json:"model,omitempty"`
	Tools        []string          `json:"tools"`
	Policies     map[string]string `json:"policies,omitempty"`
	Mode         Mode              `json:"mode"`
}

// Export is the agent id as a JSON file (the built-in one too).
func (a *Agents) Export(ctx context.Context, id string) ([]byte, error) {
	d := a.BuiltinDef()
	if !a.IsBuiltin(id) {
		var err error
		if d, err = a.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	f := agentFile{Format: AgentFileFormat, Version: AgentFileVersion, Exported: time.Now().UTC().Format(time.RFC3339),
		Agent: &agentBody{Name: d.Name, Description: d.Description, Instructions: d.Instructions, Model: d.Model,
			Tools: d.Tools, Policies: d.Policies, Mode: d.Mode}}
	if f.Agent.Tools == nil {
		f.Agent.Tools = []string{}
	}
	return json.MarshalIndent(f, "", "  ")
}

// Import stores the agent of an exported file as a new agent: its id is
// issued here, a name in use gets a number. A file that is not an agent
// file of a version this Parley reads, a field of the wrong type or out of
// bounds, or a tool Parley does not have is refused, naming the field;
// nothing is stored then.
func (a *Agents) Import(ctx context.Context, data []byte) (AgentDef, error) {
	if len(data) > MaxAgentImport {
		return AgentDef{}, &AgentError{Msg: fmt.Sprintf("the file is %s; an agent file is at most %s", size(len(data)), size(MaxAgentImport))}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f agentFile
	if err := dec.Decode(&f); err != nil {
		return AgentDef{}, decodeError(err)
	}
	if dec.More() {
		return AgentDef{}, &AgentError{Msg: "the file holds more than one JSON value"}
	}
	switch {
	case f.Format != AgentFileFormat:
		return AgentDef{}, fieldErr("format", "%q is not %q: this is not a Parley agent file", clipRunes(f.Format, 40), AgentFileFormat)
	case f.Version < 1 || f.Version > AgentFileVersion:
		return AgentDef{}, fieldErr("version", "%d is not a version this Parley reads (1 to %d)", f.Version, AgentFileVersion)
	case f.Agent == nil:
		return AgentDef{}, fieldErr("agent", "is missing")
	}
	b := f.Agent
	d := AgentDef{Name: b.Name, Description: b.Description, Instructions: b.Instructions, Model: b.Model,
		Tools: b.Tools, Policies: b.Policies, Mode: b.Mode}
	a.mu.Lock()
	defer a.mu.Unlock()
	list, err := a.List(ctx)
	if err != nil {
		return AgentDef{}, err
	}
	if n := strings.TrimSpace(d.Name); n != "" && utf8.RuneCountInString(n) <= MaxAgentName {
		d.Name = a.freeName(clipRunes(n, MaxAgentName-5), list)
	}
	if err := a.check(&d, list, ""); err != nil {
		return AgentDef{}, err
	}
	d.ID = a.newID(d.Name, list)
	return d, a.put(ctx, d)
}

// decodeError names what is wrong with an agent file that does not decode.
func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := strings.TrimPrefix(typeErr.Field, "agent.")
		want := typeErr.Type.Kind().String()
		switch want {
		case "slice":
			want = "an array of strings"
		case "map":
			want = "an object"
		case "int":
			want = "a number"
		case "ptr", "struct":
			want = "an object"
		default:
			want = "a " + want
		}
		if field == "" {
			return &AgentError{Msg: "the file must be a JSON object"}
		}
		return fieldErr(field, "must be %s, not %s", want, typeErr.Value)
	case errors.As(err, &syntax), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &AgentError{Msg: "the file is not JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return fieldErr(clipRunes(field, 60), "is not a field of an agent file")
	}
	return &AgentError{Msg: "the file is not an agent file: " + strings.TrimPrefix(err.Error(), "json: ")}
}

// Runnable is the agent d as the runtime runs it outside a chat (the Mastra
// API without a thread): the built-in agent's hooks and models, with d's
// name, instructions, model and only the tools d may use.
func (a *Agents) Runnable(d AgentDef) *agentcore.Agent {
	r := *a.builtin
	r.ID, r.Name, r.Description = d.ID, d.Name, d.Description
	r.Instructions = agentcore.Text(d.Instructions)
	if d.Model != "" {
		r.Model, r.DefaultModel = d.Model, nil
	}
	r.Tools = make(map[string]*agentcore.Tool, len(d.Tools))
	for _, n := range d.Tools {
		if t, ok := a.builtin.Tools[n]; ok {
			r.Tools[n] = t
		}
	}
	r.ToolSource, r.Agents, r.Workflows = nil, nil, nil
	return &r
}

// NewChat is the settings a new chat with the agent id starts with: the
// agent, its mode and its model. The built-in agent's ("" or its id) are
// the defaults.
func (a *Agents) NewChat(ctx context.Context, id string) (Settings, error) {
	if a.IsBuiltin(id) {
		return Settings{Mode: ModeBuild}, nil
	}
	d, err := a.Get(ctx, id)
	if err != nil {
		return Settings{}, err
	}
	return Settings{Agent: d.ID, Mode: d.Mode, Model: d.Model}, nil
}

// Of is the agent of a chat whose settings are s: ok is false for the
// built-in agent, and for an agent since deleted (the chat goes on with
// the built-in one).
func (a *Agents) Of(ctx context.Context, s Settings) (AgentDef, bool) {
	if a == nil || a.IsBuiltin(s.Agent) {
		return AgentDef{}, false
	}
	d, err := a.Get(ctx, s.Agent)
	return d, err == nil
}

// policy is the agent id's own policy for category, if it has one.
func (a *Agents) policy(ctx context.Context, id, category string) (string, bool) {
	if a == nil || a.IsBuiltin(id) {
		return "", false
	}
	d, err := a.Get(ctx, id)
	if err != nil {
		return "", false
	}
	p, ok := d.Policies[category]
	return p, ok
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// size is n bytes for a reader: "512 bytes", "64 KiB", "10.0 MiB".
func size(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
