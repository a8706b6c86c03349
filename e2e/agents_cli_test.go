package e2e

import (
	"slices"
	"strings"
	"testing"

	"parley/agentcore/scripted"
	"parley/app/chat"
)

// The real mastra CLI lists the user's agents beside the built-in one,
// reads one by id and runs it, with and without memory: the model is
// offered only the agent's tools and given its instructions.
func TestMastraCLIOwnAgent(t *testing.T) {
	node, bin := findMastraCLI(t)
	p := startParley(t)
	d, err := p.In.Agents.Create(t.Context(), chat.AgentDef{Name: "Scout", Description: "Looks around the workspace.",
		Instructions: "You are Scout. Find files and say where they are.", Tools: []string{"find_files", "view"}})
	if err != nil {
		t.Fatal(err)
	}
	mastra := mastraCLIFor(t, node, bin, p.URL)
	must := func(args ...string) map[string]any {
		t.Helper()
		out, ok := mastra(t, args...)
		if !ok {
			t.Fatalf("mastra %v failed: %v", args, out)
		}
		return out
	}
	list := must("agent", "list")
	var ids []string
	data, _ := at(list, "data").([]any)
	for _, a := range data {
		id, _ := at(a, "id").(string)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"parley", d.ID}) || at(list, "page", "total") != 2.0 {
		t.Fatalf("agent list: %v", list)
	}
	got := must("agent", "get", d.ID)
	if at(got, "data", "name") != "Scout" || at(got, "data", "instructions") != d.Instructions || at(got, "data", "tools", "execute_command") != nil || at(got, "data", "tools", "find_files") == nil {
		t.Fatalf("agent get %s: %v", d.ID, got)
	}

	offered := func(req scripted.Request) []string {
		var names []string
		for _, tl := range req.Tools {
			if tl.Function.Name != "updateWorkingMemory" { // memory is Settings → Memory's
				names = append(names, tl.Function.Name)
			}
		}
		slices.Sort(names)
		return names
	}
	check := func(what string, before int) {
		t.Helper()
		reqs := p.Model.Requests()[before:]
		if len(reqs) == 0 {
			t.Fatalf("%s: the model was not asked", what)
		}
		if got := offered(reqs[0]); !slices.Equal(got, []string{"find_files", "view"}) {
			t.Errorf("%s: offered %v, want only the agent's tools", what, got)
		}
		if sys := reqs[0].Messages[0]; sys.Role != "system" || sys.Content == "" || !systemHas(reqs[0], "You are Scout.") {
			t.Errorf("%s: the agent's instructions were not sent", what)
		}
	}
	before := len(p.Model.Requests())
	p.Model.Push(scripted.Reply{Text: "Scouted."})
	run := must("agent", "run", d.ID, `{"messages":"Where is the README?"}`)
	if at(run, "data", "text") != "Scouted." {
		t.Fatalf("agent run %s: %v", d.ID, run)
	}
	check("run without memory", before)

	before = len(p.Model.Requests())
	p.Model.Push(scripted.Reply{Text: "Scouted in a thread."})
	run = must("agent", "run", d.ID, `{"messages":"And the Makefile?","memory":{"thread":"scout_thread","resource":"cli-user"}}`)
	if at(run, "data", "text") != "Scouted in a thread." {
		t.Fatalf("agent run %s with memory: %v", d.ID, run)
	}
	check("run in a thread", before)
	th, err := p.In.Runtime.GetThread(t.Context(), "scout_thread")
	if err != nil || chat.Of(th).Agent != d.ID {
		t.Fatalf("the thread's agent: %+v, %v", chat.Of(th), err)
	}
}

// systemHas reports whether one of req's system messages holds s.
func systemHas(req scripted.Request, s string) bool {
	return slices.ContainsFunc(req.Messages, func(m scripted.Message) bool { return m.Role == "system" && strings.Contains(m.Content, s) })
}
