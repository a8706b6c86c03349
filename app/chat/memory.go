package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"parley/agentcore"
	"parley/toolkit"
)

// Memory is Mastra's working memory in Parley: one Markdown document per
// resource (the user), given to the model on every run of an agent that
// has memory on, and rewritten by the model with updateWorkingMemory or
// by the user in Settings.
type Memory struct {
	store MemoryStore
	log   *slog.Logger
}

// MemoryStore keeps the documents and the on/off setting.
type MemoryStore interface {
	agentcore.SettingsStore
	toolkit.WorkingMemoryStore
}

// memoryKey is the setting that says which agents have memory off: on
// is the default, as it is for a Mastra agent given a working memory.
const memoryKey = "memory"

// memoryReadTimeout bounds reading the document before a run: a locked
// store must not hold a run up for long, and a run without its memory is
// better than none.
const memoryReadTimeout = 5 * time.Second

type memorySetting struct {
	Off []string `json:"off,omitempty"` // agent ids
}

// MemoryDoc is a resource's working memory as Settings shows it.
type MemoryDoc struct {
	Text     string
	Set      bool      // false: none yet, or cleared
	Updated  time.Time // when it was last written
	Template string    // what a new document starts from
}

// NewMemory returns the working memory over store.
func NewMemory(store MemoryStore, log *slog.Logger) *Memory {
	if log == nil {
		log = slog.Default()
	}
	return &Memory{store: store, log: log}
}

// MemoryDocument is resourceID's working memory.
func (m *Memory) MemoryDocument(ctx context.Context, resourceID string) (MemoryDoc, error) {
	text, at, ok, err := m.store.WorkingMemory(ctx, resourceID)
	if err != nil {
		return MemoryDoc{}, err
	}
	return MemoryDoc{Text: text, Set: ok, Updated: at, Template: toolkit.DefaultWorkingMemoryTemplate}, nil
}

// SaveMemory replaces resourceID's working memory with text, checked as
// the model's is; an empty (or blank) text clears it.
func (m *Memory) SaveMemory(ctx context.Context, resourceID, text string) error {
	if strings.TrimSpace(text) == "" {
		_, _, err := m.store.SetWorkingMemory(ctx, resourceID, nil)
		return err
	}
	if err := toolkit.CheckWorkingMemory(text); err != nil {
		return err
	}
	_, _, err := m.store.SetWorkingMemory(ctx, resourceID, &text)
	return err
}

// MemoryEnabled says whether agentID's runs read and update the working
// memory.
func (m *Memory) MemoryEnabled(ctx context.Context, agentID string) (bool, error) {
	s, err := m.setting(ctx)
	if err != nil {
		return false, err
	}
	return !slices.Contains(s.Off, agentID), nil
}

// SetMemoryEnabled turns agentID's working memory on or off. Off, its
// runs are neither offered the tool nor given the document; the document
// is kept.
func (m *Memory) SetMemoryEnabled(ctx context.Context, agentID string, on bool) error {
	s, err := m.setting(ctx)
	if err != nil {
		return err
	}
	s.Off = slices.DeleteFunc(s.Off, func(id string) bool { return id == agentID })
	if !on {
		s.Off = append(s.Off, agentID)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return m.store.SetSetting(ctx, memoryKey, b)
}

func (m *Memory) setting(ctx context.Context) (memorySetting, error) {
	var s memorySetting
	raw, ok, err := m.store.GetSetting(ctx, memoryKey)
	if err != nil || !ok {
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("the %s setting: %w", memoryKey, err)
	}
	return s, nil
}

// ErrMemoryOff is an update to the working memory of an agent that has
// it off (Mastra's words for a memory without working memory).
var ErrMemoryOff = errors.New("Working memory is not enabled for this memory instance")

// WithMemory adds the working memory to every run of agent that next
// prepares: with memory on, Mastra's instruction with the thread
// resource's document follows the other instructions and
// updateWorkingMemory is offered (in every mode, as Mastra's memory tools
// are); with it off, neither.
func (m *Memory) WithMemory(agent *agentcore.Agent, next func(agentcore.Thread, *agentcore.StreamOptions)) func(agentcore.Thread, *agentcore.StreamOptions) {
	return func(t agentcore.Thread, opts *agentcore.StreamOptions) {
		if next != nil {
			next(t, opts)
		}
		if opts.ActiveTools == nil {
			for n := range agent.ToolSet() {
				opts.ActiveTools = append(opts.ActiveTools, n)
			}
			slices.Sort(opts.ActiveTools)
		}
		opts.ActiveTools = slices.DeleteFunc(opts.ActiveTools, func(n string) bool { return n == toolkit.UpdateWorkingMemoryName })
		ctx, cancel := context.WithTimeout(context.Background(), memoryReadTimeout)
		defer cancel()
		id := agent.ID
		if own, _ := opts.RequestContext[AgentKey].(string); own != "" {
			id = own // the chat's own agent: its memory setting
		}
		on, err := m.MemoryEnabled(ctx, id)
		if err != nil {
			m.log.Warn("working memory setting unreadable; this run goes without memory", "thread", t.ID, "err", err)
			return
		}
		if !on {
			return
		}
		resource := t.ResourceID
		doc, err := m.MemoryDocument(ctx, resource)
		if err != nil {
			m.log.Warn("working memory unreadable; this run goes without memory", "thread", t.ID, "resource", resource, "err", err)
			return
		}
		opts.Instructions = append(opts.Instructions, agentcore.Text(toolkit.WorkingMemoryInstruction(doc.Template, doc.Text))...)
		if _, ok := agent.Tools[toolkit.UpdateWorkingMemoryName]; ok {
			opts.ActiveTools = append(opts.ActiveTools, toolkit.UpdateWorkingMemoryName)
		}
	}
}
