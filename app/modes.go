package app

import (
	"slices"

	"parley/agentcore"
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

// buildHidden are hidden in Build mode: submit_plan belongs to Plan mode,
// and write_file is limited to plan files until edits have approvals.
var buildHidden = []string{"submit_plan", "write_file"}

const planInstructions = `You are in Plan mode. Explore the workspace read-only (view, find_files, search_content) and ask the user (ask_user) when something is unclear. Do not change any file except your plan.
Write your plan as markdown to .parley/plans/<short-name>.md with write_file, starting with a "# Title" line, then call submit_plan with that path and wait for the user's decision. Revise the same file when asked for changes.`

// prepare sets a run's tools and instructions from its thread's mode.
func prepare(agent *agentcore.Agent) func(t agentcore.Thread, opts *agentcore.StreamOptions) {
	return func(t agentcore.Thread, opts *agentcore.StreamOptions) {
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
