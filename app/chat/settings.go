package chat

// A chat's settings live in its thread's metadata under the keys below; no
// other package reads or writes those keys (the runtime reads the model,
// agentcore.ThreadModelKey). Every change is a merge applied in one write
// transaction, so two writers of different settings never undo each other.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
)

// The thread metadata keys of a chat's settings.
const (
	keyMode      = "mode"
	keyYOLO      = "yolo"
	keyWorkspace = "workspace"
	keyPlans     = "plans"
	keyModel     = agentcore.ThreadModelKey // the runtime reads it too
	keyInstr     = "instructions"
	keyThinking  = "thinking"
	keyAgent     = "agent"
)

// MachineKeys are the settings that are the local user's choice, not part
// of a chat's content: running tools without asking, the folder tools
// work in, and the agent (an id of this machine's agents, whose tools and
// approval policies are the local user's). An imported chat may not set
// them.
func MachineKeys() []string { return []string{keyYOLO, keyWorkspace, keyAgent} }

// Mode is how the agent works in a chat.
type Mode string

// Thread modes: Build (the default) works on the task; Plan explores
// read-only and proposes a plan for approval (Mastra Code's plan mode).
const (
	ModeBuild Mode = "build"
	ModePlan  Mode = "plan"
)

// ParseMode reads a mode a user chose; anything but "plan" or "build" is an
// error.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeBuild, ModePlan:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want plan or build)", s)
}

// ApprovedPlan is a plan the user approved in the chat.
type ApprovedPlan struct {
	Title      string    // "" when the plan had none
	Path       string    // the plan file, relative to the workspace
	ApprovedAt time.Time // zero when not recorded
}

// Settings are a chat's settings. The zero value is the default: Build
// mode, YOLO off, the default workspace and model, no plans.
type Settings struct {
	Mode      Mode
	YOLO      bool           // tool calls run without asking
	Workspace string         // the chat's own folder; "": the default
	Model     string         // provider/model; "": the agent's
	Plans     []ApprovedPlan // approved, oldest first
	// Instructions are the user's own for this chat, given to the model
	// after the agent's and the project's (chat menu → Instructions).
	Instructions string
	// Thinking is how hard the model thinks (the header's Thinking
	// control); "": the model's own default.
	Thinking llm.Thinking
	// Sampling are the chat's own temperature, max output tokens and
	// top-p (chat menu → Model settings); unset: the model's defaults.
	Sampling Sampling
	// Agent is the id of the chat's agent, one of the user's (Settings →
	// Agents), chosen when the chat was made; "": the built-in agent.
	Agent string
}

// MaxChatInstructions bounds a chat's own instructions.
const MaxChatInstructions = 8 << 10

// WorkspaceOr is the folder the chat's tools work in: its own, or def.
func (s Settings) WorkspaceOr(def string) string {
	if s.Workspace != "" {
		return s.Workspace
	}
	return def
}

// Of reads a thread's settings. A missing or unreadable value (a wrong
// type, an unknown mode) reads as its default.
func Of(t agentcore.Thread) Settings { return decode(t.Metadata) }

func decode(meta map[string]any) Settings {
	s := Settings{Mode: ModeBuild}
	if m, _ := meta[keyMode].(string); Mode(m) == ModePlan {
		s.Mode = ModePlan
	}
	s.YOLO = meta[keyYOLO] == true
	s.Workspace, _ = meta[keyWorkspace].(string)
	s.Model, _ = meta[keyModel].(string)
	s.Instructions, _ = meta[keyInstr].(string)
	s.Agent, _ = meta[keyAgent].(string)
	if v, _ := meta[keyThinking].(string); v != "" {
		s.Thinking, _ = llm.ParseThinking(v) // unknown: the default
	}
	s.Sampling = decodeSampling(meta)
	list, _ := meta[keyPlans].([]any)
	for _, p := range list {
		m, _ := p.(map[string]any)
		if m == nil {
			continue
		}
		var pl ApprovedPlan
		pl.Title, _ = m["title"].(string)
		pl.Path, _ = m["path"].(string)
		if at, _ := m["approvedAt"].(string); at != "" {
			pl.ApprovedAt, _ = time.Parse(time.RFC3339, at)
		}
		s.Plans = append(s.Plans, pl)
	}
	return s
}

// encode writes into meta the settings of s that differ from was (what
// meta held): a setting nobody changed keeps its stored value as it is.
func encode(meta map[string]any, was, s Settings) {
	if s.Mode != was.Mode {
		meta[keyMode] = string(s.Mode)
	}
	if s.YOLO != was.YOLO {
		meta[keyYOLO] = s.YOLO
	}
	if s.Workspace != was.Workspace {
		setOrDelete(meta, keyWorkspace, s.Workspace)
	}
	if s.Model != was.Model {
		setOrDelete(meta, keyModel, s.Model)
	}
	if s.Instructions != was.Instructions {
		setOrDelete(meta, keyInstr, s.Instructions)
	}
	if s.Agent != was.Agent {
		setOrDelete(meta, keyAgent, s.Agent)
	}
	if s.Thinking != was.Thinking {
		setOrDelete(meta, keyThinking, string(s.Thinking))
	}
	encodeSampling(meta, was.Sampling, s.Sampling)
	if !slices.Equal(s.Plans, was.Plans) {
		list := make([]any, len(s.Plans))
		for i, p := range s.Plans {
			at := ""
			if !p.ApprovedAt.IsZero() {
				at = p.ApprovedAt.UTC().Format(time.RFC3339)
			}
			list[i] = map[string]any{"title": p.Title, "path": p.Path, "approvedAt": at}
		}
		meta[keyPlans] = list
	}
}

func setOrDelete(meta map[string]any, key, v string) {
	if v == "" {
		delete(meta, key)
		return
	}
	meta[key] = v
}

// Metadata is the metadata of a new thread with settings s (the settings
// that differ from the defaults).
func Metadata(s Settings) map[string]any {
	meta := map[string]any{}
	encode(meta, Settings{Mode: ModeBuild}, s)
	if len(meta) == 0 {
		return nil
	}
	return meta
}

// Chats applies the chat rules to the runtime's threads.
type Chats struct {
	rt *agentcore.Runtime
}

// New returns the chat rules over rt.
func New(rt *agentcore.Runtime) *Chats { return &Chats{rt: rt} }

// Settings reads a chat's settings.
func (c *Chats) Settings(ctx context.Context, threadID string) (Settings, error) {
	t, err := c.rt.GetThread(ctx, threadID)
	if err != nil {
		return Settings{}, fmt.Errorf("read chat settings: %w", err)
	}
	return Of(t), nil
}

// Update changes a chat's settings with fn, atomically: fn sees the stored
// settings and changes them; only the settings it changed are written, in
// the same transaction as the read. An error from fn writes nothing.
func (c *Chats) Update(ctx context.Context, threadID string, fn func(s *Settings) error) (Settings, error) {
	var out Settings
	_, err := c.rt.UpdateThreadMetadata(ctx, threadID, func(meta map[string]any) error {
		was := decode(meta)
		s := was
		s.Plans = slices.Clone(was.Plans)
		if err := fn(&s); err != nil {
			return err
		}
		encode(meta, was, s)
		out = s
		return nil
	})
	if err != nil {
		return Settings{}, fmt.Errorf("update chat settings: %w", err)
	}
	return out, nil
}

// SetMode switches a chat between Build and Plan.
func (c *Chats) SetMode(ctx context.Context, threadID string, m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	_, err := c.Update(ctx, threadID, func(s *Settings) error { s.Mode = m; return nil })
	return err
}

// SetYOLO turns a chat's YOLO switch on or off.
func (c *Chats) SetYOLO(ctx context.Context, threadID string, on bool) error {
	_, err := c.Update(ctx, threadID, func(s *Settings) error { s.YOLO = on; return nil })
	return err
}

// SetWorkspace sets the folder a chat's tools work in (an absolute path the
// caller checked).
func (c *Chats) SetWorkspace(ctx context.Context, threadID, dir string) error {
	_, err := c.Update(ctx, threadID, func(s *Settings) error { s.Workspace = dir; return nil })
	return err
}

// SetThinking sets how hard the model thinks in a chat's next runs.
func (c *Chats) SetThinking(ctx context.Context, threadID string, t llm.Thinking) error {
	if _, ok := llm.ParseThinking(string(t)); !ok {
		return fmt.Errorf("unknown thinking level %q (want off, low, medium or high)", t)
	}
	_, err := c.Update(ctx, threadID, func(s *Settings) error { s.Thinking = t; return nil })
	return err
}

// SetModel sets the model a chat's next runs use.
func (c *Chats) SetModel(ctx context.Context, threadID, model string) error {
	_, err := c.Update(ctx, threadID, func(s *Settings) error { s.Model = model; return nil })
	return err
}
