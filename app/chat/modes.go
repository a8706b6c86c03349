package chat

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"parley/agentcore"
	"parley/toolkit"
)

// planTools are what Plan mode may use: reading, asking, tracking tasks,
// writing the plan file, and submitting it.
var planTools = []string{"view", "find_files", "search_content", "ask_user", "write_file", "submit_plan",
	"task_write", "task_update", "task_complete", "task_check"}

const planInstructions = `You are in Plan mode. Explore the workspace read-only (view, find_files, search_content) and ask the user (ask_user) when something is unclear. Do not change any file except your plan.
Write your plan as markdown to .parley/plans/<short-name>.md with write_file, starting with a "# Title" line, then call submit_plan with that path and wait for the user's decision. Revise the same file when asked for changes.`

// modeKey is the request-context key that tells a run's tools its mode.
const modeKey = "mode"

// Prepare is the runtime's Prepare hook: it sets a run's workspace, tools
// and instructions from its chat's settings.
func Prepare(agent *agentcore.Agent, wss *toolkit.Workspaces) func(t agentcore.Thread, opts *agentcore.StreamOptions) {
	return PrepareWith(agent, wss, nil)
}

// agentReadTimeout bounds reading a chat's agent before a run: a locked
// store must not hold the run up for long (it goes on as the built-in
// agent).
const agentReadTimeout = 5 * time.Second

// PrepareWith is Prepare for chats that may have one of the user's agents:
// such a chat's runs take that agent's instructions (in place of the
// built-in agent's), only its tools, and its model unless the chat picked
// one; its approval policies apply through the gate (AgentKey).
func PrepareWith(agent *agentcore.Agent, wss *toolkit.Workspaces, agents *Agents) func(t agentcore.Thread, opts *agentcore.StreamOptions) {
	return func(t agentcore.Thread, opts *agentcore.StreamOptions) {
		s := Of(t)
		opts.RequestContext = map[string]any{toolkit.WorkspaceKey: s.WorkspaceOr(wss.Default.Root())}
		names := make([]string, 0, len(agent.Tools))
		for n := range agent.ToolSet() {
			names = append(names, n)
		}
		slices.Sort(names)
		ctx, cancel := context.WithTimeout(context.Background(), agentReadTimeout)
		own, ok := agents.Of(ctx, s)
		cancel()
		if ok {
			names = slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(own.Tools, n) })
			opts.AgentInstructions = agentcore.Text(own.Instructions)
			opts.RequestContext[AgentKey] = own.ID
			if s.Model == "" && own.Model != "" {
				opts.Model = own.Model
			}
		}
		var active []string
		if s.Mode == ModePlan {
			for _, n := range names {
				if slices.Contains(planTools, n) {
					active = append(active, n)
				}
			}
			opts.Instructions = append(opts.Instructions, agentcore.Text(planInstructions)...)
			opts.RequestContext[modeKey] = string(ModePlan)
		} else {
			// Every tool, submit_plan too: Mastra's built-ins are in every
			// mode, and a plan submitted from Build is reviewed the same way.
			active = names
		}
		opts.ActiveTools = active
		opts.Thinking = s.Thinking
		applySampling(opts, s.Sampling.within(opts.Model))
		// The project's rules (AGENTS.md), read on every run, then the
		// user's own for this chat.
		if ws, err := wss.For(&agentcore.ToolContext{RequestContext: opts.RequestContext}); err == nil {
			if text := toolkit.ReadProjectInstructions(context.Background(), ws).SystemText(); text != "" {
				opts.Instructions = append(opts.Instructions, agentcore.Text(text)...)
			}
		}
		if s.Instructions != "" {
			opts.Instructions = append(opts.Instructions, agentcore.Text("The user's instructions for this chat:\n\n"+s.Instructions)...)
		}
	}
}

// inPlanMode reports whether a tool runs in a Plan mode run.
func inPlanMode(tc *agentcore.ToolContext) bool {
	return tc != nil && tc.RequestContext[modeKey] == string(ModePlan)
}

// PlanGuarded limits a write tool to the plan file while the chat is in
// Plan mode; in Build mode it writes anywhere in the workspace (behind the
// approval gate).
func PlanGuarded(wss *toolkit.Workspaces, t *agentcore.Tool) *agentcore.Tool {
	write := t.Execute
	return t.WithExecute(
		func(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			if inPlanMode(tc) {
				var in struct {
					Path string `json:"path"`
				}
				_ = json.Unmarshal(input, &in)
				ws, err := wss.For(tc)
				if err != nil {
					return nil, err
				}
				abs, err := ws.Resolve(in.Path)
				if err != nil {
					return nil, err
				}
				if err := toolkit.PlanFilesOnly(ws.Rel(abs)); err != nil {
					return nil, err
				}
			}
			return write(ctx, input, tc)
		})
}
