package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"parley/agentcore"
	"parley/toolkit"
)

// Approval policies per tool category.
const (
	PolicyAllow = "allow"
	PolicyAsk   = "ask"
	PolicyDeny  = "deny"
)

// defaultPolicies: reading is free; changing files, running commands and
// reaching the web ask first.
var defaultPolicies = map[string]string{
	"read": PolicyAllow, "edit": PolicyAsk, "execute": PolicyAsk, "web": PolicyAsk, "mcp": PolicyAsk, "other": PolicyAllow,
}

// approvalsKey is the setting holding policies and remembered approvals.
const approvalsKey = "approvals"

// Approvals is what the approvals setting holds.
type Approvals struct {
	Policies map[string]string `json:"policies,omitempty"`
	// Always are the "always allow" answers, per workspace and category, or
	// per command prefix for execute_command.
	Always []AlwaysRule `json:"always,omitempty"`
}

// AlwaysRule lets calls through without asking.
type AlwaysRule struct {
	Workspace string `json:"workspace"`
	Category  string `json:"category"`
	Prefix    string `json:"prefix,omitempty"` // execute_command: the command's first words
}

// approvalRequest is what the approval dialog shows besides the arguments.
type approvalRequest struct {
	Category string `json:"category"`
	Prefix   string `json:"prefix,omitempty"`
	// File is what a write_file call replaces, read when the user is asked.
	File *FileOnDisk `json:"file,omitempty"`
}

// Gate is the agent's beforeToolCall hook: it applies the thread's
// YOLO switch, the category policies and remembered approvals, and asks the
// user otherwise. Its questions are suspensions: they survive a restart.
type Gate struct {
	store     GateStore
	workspace string
	category  func(tool string) string
	toolNames func() []string // for Settings: which tools each category holds
	agents    *Agents         // the user's agents, whose own policies win; nil: none
	mu        sync.Mutex      // one change of the approvals setting at a time
}

// UseAgents makes the gate apply the approval policies of the user's
// agents to their runs. Call it before any run starts.
func (g *Gate) UseAgents(a *Agents) { g.agents = a }

// runAgent is the id of the agent a tool call's run is for: the chat's
// agent (Prepare puts it in the request context), else the running agent.
func runAgent(tc *agentcore.ToolContext) string {
	if tc == nil {
		return ""
	}
	if id, _ := tc.RequestContext[AgentKey].(string); id != "" {
		return id
	}
	return tc.AgentID
}

// GateStore is what the gate keeps and reads: the approvals setting and
// the chats' settings.
type GateStore interface {
	agentcore.SettingsStore
	GetThread(ctx context.Context, id string) (agentcore.Thread, error)
}

// NewGate returns the approval gate. workspace is the default folder (the
// one "always allow" remembers for chats without their own); category
// names a tool's category; toolNames lists the agent's tools.
func NewGate(store GateStore, workspace string, category func(tool string) string, toolNames func() []string) *Gate {
	return &Gate{store: store, workspace: workspace, category: category, toolNames: toolNames}
}

// Before is the agent's beforeToolCall hook.
func (g *Gate) Before(ctx context.Context, c agentcore.ToolCallInfo) (*agentcore.ToolDecision, error) {
	cat := g.category(c.ToolName)
	if c.ToolName == "write_file" && inPlanMode(c.Context) {
		return nil, nil // Plan mode writes only the plan file (PlanGuarded)
	}
	a, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	policy := a.policy(cat)
	if own, ok := g.agents.policy(ctx, runAgent(c.Context), cat); ok {
		policy = own // the run's agent has a policy of its own
	}
	if policy == PolicyAllow {
		return nil, nil
	}
	if t, err := g.store.GetThread(ctx, c.Context.ThreadID); err == nil && Of(t).YOLO {
		return nil, nil // the thread's YOLO switch: the user accepted the risk
	}
	if policy == PolicyDeny {
		return &agentcore.ToolDecision{Error: fmt.Sprintf("Tool calls in the %q category are turned off by the approval policy; %s was not run. Do the task without it or ask the user to allow it in Settings.", cat, c.ToolName)}, nil
	}
	prefix := ""
	if cat == "execute" {
		prefix = commandPrefix(c.Input)
	}
	workspace := g.workspace
	if w, _ := c.Context.RequestContext[toolkit.WorkspaceKey].(string); w != "" {
		workspace = w // the chat's own folder
	}
	if a.allowed(workspace, cat, prefix) {
		return nil, nil
	}
	switch {
	case c.Approval == nil:
		req := approvalRequest{Category: cat, Prefix: prefix}
		if c.ToolName == "write_file" {
			req.File = fileOnDisk(workspace, c.Input)
		}
		return &agentcore.ToolDecision{RequireApproval: true, ApprovalPayload: req}, nil
	case c.Approval.Decision == "always":
		rule := AlwaysRule{Workspace: workspace, Category: cat, Prefix: prefix}
		if err := g.change(ctx, func(a *Approvals) error { a.Always = append(a.Always, rule); return nil }); err != nil {
			return nil, err
		}
		return nil, nil
	case c.Approval.Decision == "allow":
		return nil, nil
	}
	msg := "The user denied this tool call; " + c.ToolName + " was not run."
	if r := strings.TrimSpace(c.Approval.Reason); r != "" {
		msg += " Their reason: " + r
	}
	return &agentcore.ToolDecision{Error: msg}, nil
}

func (a Approvals) policy(cat string) string {
	if p, ok := a.Policies[cat]; ok {
		return p
	}
	if p, ok := defaultPolicies[cat]; ok {
		return p
	}
	return PolicyAsk
}

func (a Approvals) allowed(workspace, cat, prefix string) bool {
	return slices.ContainsFunc(a.Always, func(r AlwaysRule) bool {
		return r.Workspace == workspace && r.Category == cat && (cat != "execute" || (prefix != "" && r.Prefix == prefix))
	})
}

func (g *Gate) load(ctx context.Context) (Approvals, error) {
	var a Approvals
	raw, ok, err := g.store.GetSetting(ctx, approvalsKey)
	if err != nil || !ok {
		return a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("read approval settings: %w", err)
	}
	return a, nil
}

// change reads, changes and writes the approvals setting, one change at a
// time: two answers remembered at once both stay.
func (g *Gate) change(ctx context.Context, fn func(a *Approvals) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, err := g.load(ctx)
	if err != nil {
		return err
	}
	if err := fn(&a); err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode approval settings: %w", err)
	}
	if err := g.store.SetSetting(ctx, approvalsKey, b); err != nil {
		return fmt.Errorf("save approval settings: %w", err)
	}
	return nil
}

// commandPrefix is what "always allow" remembers of a command: its first
// two words ("go test", "npm run"), or one for a lone word. A command that
// chains, pipes, redirects or substitutes ("go test && rm -rf ~") has no
// prefix: it is always asked about.
func commandPrefix(input json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(input, &in)
	if strings.ContainsAny(in.Command, ";&|`$<>\n\\") {
		return ""
	}
	f := strings.Fields(in.Command)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}

// categories lists the approval categories in the order Settings shows.
var categories = []string{"read", "edit", "execute", "web", "mcp", "other"}

// CategoryPolicy is one category's policy and the tools it holds.
type CategoryPolicy struct {
	Category string
	Policy   string
	Tools    []string // sorted
}

// Policies are the category policies in the order Settings shows them,
// and the remembered "always allow" answers (a rule's index is what Revoke
// takes).
func (g *Gate) Policies(ctx context.Context) ([]CategoryPolicy, []AlwaysRule, error) {
	a, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	byCat := map[string][]string{}
	for _, n := range g.toolNames() {
		c := g.category(n)
		byCat[c] = append(byCat[c], n)
	}
	var pols []CategoryPolicy
	for _, c := range categories {
		pols = append(pols, CategoryPolicy{Category: c, Policy: a.policy(c), Tools: byCat[c]})
	}
	return pols, a.Always, nil
}

// SetPolicy changes one category's policy.
func (g *Gate) SetPolicy(ctx context.Context, category, policy string) error {
	if !slices.Contains(categories, category) {
		return fmt.Errorf("unknown category %q (want one of %s)", category, strings.Join(categories, ", "))
	}
	if policy != PolicyAllow && policy != PolicyAsk && policy != PolicyDeny {
		return fmt.Errorf("unknown policy %q (want allow, ask or deny)", policy)
	}
	return g.change(ctx, func(a *Approvals) error {
		if a.Policies == nil {
			a.Policies = map[string]string{}
		}
		a.Policies[category] = policy
		return nil
	})
}

// Revoke forgets the always-allow rule at index.
func (g *Gate) Revoke(ctx context.Context, index int) error {
	return g.change(ctx, func(a *Approvals) error {
		if index < 0 || index >= len(a.Always) {
			return fmt.Errorf("no always-allow rule %d", index)
		}
		a.Always = slices.Delete(a.Always, index, index+1)
		return nil
	})
}
