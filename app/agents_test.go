package app

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/app/chat"
	"parley/toolkit"
)

// TestOwnAgentRestrictedTools: a chat of one of the user's agents offers
// the model exactly the agent's tools (the exact provider request, through
// the scripted model), a call to another tool is not run, the agent's
// instructions replace the built-in agent's, its approval policy applies,
// and Plan mode narrows its tools further.
func TestOwnAgentRestrictedTools(t *testing.T) {
	dir := t.TempDir()
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	in, err := Open(t.Context(), Config{DataDir: dir, Workspace: dir, Model: DemoModel, Getenv: func(string) string { return "" }},
		Options{Scripted: model, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	ctx, rt := t.Context(), in.Runtime

	run := func(agentID, text string, replies ...scripted.Reply) (agentcore.Thread, []scripted.Request) {
		t.Helper()
		settings, err := in.Agents.NewChat(ctx, agentID)
		if err != nil {
			t.Fatal(err)
		}
		th, err := rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Metadata: chat.Metadata(settings)})
		if err != nil {
			t.Fatal(err)
		}
		before := len(model.Requests())
		model.Push(replies...)
		if _, err := rt.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: text}); err != nil {
			t.Fatal(err)
		}
		if err := rt.Wait(ctx, th.ID); err != nil {
			t.Fatal(err)
		}
		return th, model.Requests()[before:]
	}
	offered := func(req scripted.Request) []string {
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		return names
	}
	system := func(req scripted.Request) string {
		var out []string
		for _, m := range req.Messages {
			if m.Role == "system" {
				out = append(out, m.Content)
			}
		}
		return strings.Join(out, "\n---\n")
	}
	toolResult := func(req scripted.Request, callID string) string {
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == callID {
				return m.Content
			}
		}
		return ""
	}

	reader, err := in.Agents.Create(ctx, chat.AgentDef{Name: "Reader", Instructions: "You only read files and answer in one line.",
		Tools: []string{"view", "find_files"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Memory.SetMemoryEnabled(ctx, reader.ID, false); err != nil {
		t.Fatal(err)
	}
	_, reqs := run(reader.ID, "Delete everything.",
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "x1", Name: "execute_command", Args: `{"command":"rm -rf ."}`}}},
		scripted.Reply{Text: "I cannot."})
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		if got := offered(req); !slices.Equal(got, []string{"find_files", "view"}) {
			t.Errorf("request %d offered %v, want exactly the agent's tools [find_files view]", i, got)
		}
	}
	if sys := system(reqs[0]); !strings.Contains(sys, "You only read files") || strings.Contains(sys, "You are Parley") {
		t.Errorf("the agent's instructions do not replace the built-in agent's:\n%s", sys)
	}
	if res := toolResult(reqs[1], "x1"); !strings.Contains(res, "Tool \"execute_command\" not found. Available tools: find_files, view.") {
		t.Errorf("a call to a tool the agent lacks came back as %q", res)
	}

	// Memory on for the agent: its tool joins, nothing else.
	if err := in.Memory.SetMemoryEnabled(ctx, reader.ID, true); err != nil {
		t.Fatal(err)
	}
	_, reqs = run(reader.ID, "Hello.", scripted.Reply{Text: "Hi."})
	if got := offered(reqs[0]); !slices.Equal(got, []string{"find_files", toolkit.UpdateWorkingMemoryName, "view"}) {
		t.Errorf("with memory on, offered %v", got)
	}

	// The built-in agent's chats still have every tool.
	_, reqs = run("", "Hello.", scripted.Reply{Text: "Hi."})
	if got := offered(reqs[0]); !slices.Contains(got, "execute_command") || !slices.Contains(got, "write_file") {
		t.Errorf("the built-in agent offered %v", got)
	}
	if !strings.Contains(system(reqs[0]), "You are Parley") {
		t.Error("the built-in agent lost its instructions")
	}

	// Its own approval policy: edits are off for this agent.
	careful, err := in.Agents.Create(ctx, chat.AgentDef{Name: "Careful", Instructions: "Be careful.",
		Tools: []string{"write_file"}, Policies: map[string]string{toolkit.CategoryEdit: chat.PolicyDeny}})
	if err != nil {
		t.Fatal(err)
	}
	_, reqs = run(careful.ID, "Write a note.",
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"note.txt","content":"hi"}`}}},
		scripted.Reply{Text: "Denied."})
	if res := toolResult(reqs[1], "w1"); !strings.Contains(res, "turned off by the approval policy") {
		t.Errorf("the agent's deny policy did not apply: %q", res)
	}

	// Plan mode by default: its tools narrowed to Plan mode's.
	planner, err := in.Agents.Create(ctx, chat.AgentDef{Name: "Planner", Instructions: "Plan first.", Mode: chat.ModePlan,
		Tools: []string{"view", "write_file", "execute_command"}})
	if err != nil {
		t.Fatal(err)
	}
	th, reqs := run(planner.ID, "Plan it.", scripted.Reply{Text: "A plan."})
	if chat.Of(th).Mode != chat.ModePlan {
		t.Fatalf("the planner's chat started in %q", chat.Of(th).Mode)
	}
	if got := offered(reqs[0]); !slices.Equal(got, []string{toolkit.UpdateWorkingMemoryName, "view", "write_file"}) {
		t.Errorf("Plan mode offered %v, want view and write_file (and the memory tool)", got)
	}
}
