package e2e

import (
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
	"parley/app/chat"
)

// The screens of the user's agents have no serious or critical
// accessibility violation (axe-core, light and dark, a phone and a laptop)
// and are photographed for people to look at: Settings → Agents, an
// agent's page (the user's and the built-in one's), the new-chat chooser
// and a chat's header naming its agent (artifacts/screen-agents-*.png).
func TestA11yOwnAgents(t *testing.T) {
	a := newAuditor(t)
	p := startParley(t)
	ctx := t.Context()
	d, err := p.In.Agents.Create(ctx, chat.AgentDef{Name: "Release notes", Description: "Writes the release notes from the git log.",
		Instructions: "You write release notes.", Tools: []string{"view", "find_files", "search_content", "execute_command"},
		Policies: map[string]string{"execute": chat.PolicyAsk}, Mode: chat.ModePlan})
	if err != nil {
		t.Fatal(err)
	}
	pg := p.page("/settings")
	a.screen(pg, "agents-settings", "#agents")
	pg = p.page("/settings/agents/" + d.ID)
	a.screen(pg, "agents-page", "")
	pg = p.page("/settings/agents/parley")
	a.screen(pg, "agents-builtin", "")
	pg = p.page("/")
	a.screen(pg, "agents-welcome", "")
	settings, err := p.In.Agents.NewChat(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	th, err := p.In.Runtime.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: "Notes for 1.4", Metadata: chat.Metadata(settings)})
	if err != nil {
		t.Fatal(err)
	}
	p.Model.Push(scripted.Reply{Text: "Here is a plan for the notes."})
	if _, err := p.In.Runtime.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "Write the notes for 1.4."}); err != nil {
		t.Fatal(err)
	}
	if err := p.In.Runtime.Wait(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	pg = p.page("/t/" + th.ID)
	waitJS(t, pg, `() => document.querySelector('#chat-header [data-chat-agent]')?.textContent === 'Release notes'`)
	a.screen(pg, "agents-chat", "")
	if len(a.failed) > 0 {
		t.Errorf("accessibility violations:\n%s", strings.Join(a.failed, "\n"))
	}
}
