package app

import (
	"context"
	"encoding/json"
	"slices"

	"parley/agentcore"
	"parley/toolkit"
)

// Thread modes: Build (the default) works on the task; Plan explores
// read-only and proposes a plan for approval (Mastra Code's plan mode).
const (
	ModeBuild = "build"
	ModePlan  = "plan"
)

// planTools are what Plan mode may use: reading, asking, tracking tasks,
// writing the plan file, and submitting it.
var planTools = []string{"view", "find_files", "search_content", "ask_user", "write_file", "submit_plan",
	"task_write", "task_update", "task_complete", "task_check"}

// buildHidden are hidden in Build mode: submit_plan belongs to Plan mode.
var buildHidden = []string{"submit_plan"}

const planInstructions = `You are in Plan mode. Explore the workspace read-only (view, find_files, search_content) and ask the user (ask_user) when something is unclear. Do not change any file except your plan.
Write your plan as markdown to .parley/plans/<short-name>.md with write_file, starting with a "# Title" line, then call submit_plan with that path and wait for the user's decision. Revise the same file when asked for changes.`

// prepare sets a run's tools and instructions from its thread's mode.
func prepare(agent *agentcore.Agent, wss *toolkit.Workspaces) func(t agentcore.Thread, opts *agentcore.StreamOptions) {
	return func(t agentcore.Thread, opts *agentcore.StreamOptions) {
		opts.RequestContext = map[string]any{toolkit.WorkspaceKey: ThreadWorkspace(t, wss.Default.Root())}
		names := make([]string, 0, len(agent.Tools))
		for n := range agent.ToolSet() {
			names = append(names, n)
		}
		slices.Sort(names)
		var active []string
		if ThreadMode(t) == ModePlan {
			for _, n := range names {
				if slices.Contains(planTools, n) {
					active = append(active, n)
				}
			}
			opts.Instructions = append(opts.Instructions, agentcore.Text(planInstructions)...)
			opts.RequestContext["mode"] = ModePlan
		} else {
			for _, n := range names {
				if !slices.Contains(buildHidden, n) {
					active = append(active, n)
				}
			}
		}
		opts.ActiveTools = active
	}
}

// ThreadMode is a thread's mode.
func ThreadMode(t agentcore.Thread) string {
	if m, _ := t.Metadata["mode"].(string); m == ModePlan {
		return ModePlan
	}
	return ModeBuild
}

// inPlanMode reports whether a tool runs in a Plan mode run.
func inPlanMode(tc *agentcore.ToolContext) bool {
	return tc != nil && tc.RequestContext["mode"] == ModePlan
}

// planGuarded limits a write tool to the plan file while the thread is in
// Plan mode; in Build mode it writes anywhere in the workspace (behind the
// approval gate).
func planGuarded(wss *toolkit.Workspaces, t *agentcore.Tool) *agentcore.Tool {
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

// ThreadWorkspace is the folder a thread's tools work in: its own, or the
// default.
func ThreadWorkspace(t agentcore.Thread, def string) string {
	if w, _ := t.Metadata["workspace"].(string); w != "" {
		return w
	}
	return def
}
