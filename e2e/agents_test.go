package e2e

import (
	"slices"
	"strings"
	"testing"

	"parley/agentcore/scripted"
	"parley/app/chat"
)

// An agent of one's own, end to end: made in Settings → Agents (name,
// instructions, two tools), chosen on the new-chat screen, its name in the
// chat's header next to the reply, after a reload too; the model was
// offered only its tools. Settings → Agents, the agent's page and the
// chooser are photographed light and dark into artifacts/agents-*.png.
func TestOwnAgentInSettingsAndChat(t *testing.T) {
	p := startParley(t)
	pg := p.page("/settings#agents")
	sized(pg, 1280, 900)
	clickToLoad(t, pg, "#agent-new")
	const name = "Docs <Writer>"
	pg.MustElement("#agent-name").MustInput(name)
	pg.MustElement("#agent-description").MustInput("Writes and fixes the project's documentation.")
	pg.MustElement("#agent-instructions").MustInput("You write documentation. Answer in one short paragraph.")
	// Only view and find_files.
	pg.MustEval(`() => document.querySelectorAll('#agent-form input[name=tools]').forEach(b => { b.checked = b.value === 'view' || b.value === 'find_files' })`)
	pg.MustElement(`select[name=policy-edit]`).MustSelect("deny")
	pg.MustElement("#agent-memory").MustClick() // off: not even the memory tool
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustEval(`() => { document.querySelector('#settings').scrollTop = 0; document.scrollingElement.scrollTop = 0 }`)
		pg.MustScreenshot(artifact("agents-form-" + scheme + ".png"))
		pg.MustEval(`() => { const s = document.querySelector('#settings'); s.scrollTop = s.scrollHeight }`)
		pg.MustScreenshot(artifact("agents-form-tools-" + scheme + ".png"))
	}
	colorScheme(t, pg, "light")
	clickToLoad(t, pg, "#agent-save")
	waitJS(t, pg, `(n) => [...document.querySelectorAll('#agents-list [data-agent-name]')].some(e => e.textContent === n)`, name)
	list, err := p.In.Agents.List(t.Context())
	if err != nil || len(list) != 1 || !slices.Equal(list[0].Tools, []string{"find_files", "view"}) || list[0].Policies["edit"] != chat.PolicyDeny {
		t.Fatalf("stored agents %+v, %v", list, err)
	}
	id := list[0].ID
	if on, err := p.In.Memory.MemoryEnabled(t.Context(), id); err != nil || on {
		t.Fatalf("the agent's working memory is on (%v), the form turned it off", err)
	}
	pg.MustEval(`() => { document.getElementById('agents').scrollIntoView(); document.scrollingElement.scrollTop = 0 }`)
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustScreenshot(artifact("agents-settings-" + scheme + ".png"))
	}
	colorScheme(t, pg, "light")

	// A new chat with it.
	pg = p.page("/")
	sized(pg, 1280, 800)
	if got := evalString(pg, `() => document.querySelector('#welcome-agent').selectedOptions[0].textContent`); got != "Parley" {
		t.Fatalf("the chooser starts on %q, want the built-in Parley", got)
	}
	pg.MustElement("#welcome-agent").MustSelect(name)
	pg.MustElement(".welcome textarea[name=text]").MustInput("Document the build.")
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustScreenshot(artifact("agents-new-chat-" + scheme + ".png"))
	}
	colorScheme(t, pg, "light")
	before := len(p.Model.Requests())
	p.Model.Push(scripted.Reply{Text: "The build is documented in BUILD.md."})
	clickToLoad(t, pg, ".welcome button[type=submit]")
	waitJS(t, pg, `(n) => document.querySelector('#chat-header [data-chat-agent]')?.textContent === n`, name)
	waitJS(t, pg, `() => (document.querySelector('#messages .msg-assistant .msg-body')?.textContent || '').includes('documented in BUILD.md')`)
	reqs := p.Model.Requests()[before:]
	if len(reqs) == 0 {
		t.Fatal("the model was not asked")
	}
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Function.Name)
	}
	slices.Sort(offered)
	if !slices.Equal(offered, []string{"find_files", "view"}) {
		t.Errorf("the agent's chat offered %v", offered)
	}
	if !strings.Contains(string(reqs[0].Body), "You write documentation.") {
		t.Error("the agent's instructions were not sent")
	}
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, pg, scheme)
		pg.MustScreenshot(artifact("agents-chat-" + scheme + ".png"))
	}
	colorScheme(t, pg, "light")
	threadID := strings.TrimPrefix(evalString(pg, `() => location.pathname`), "/t/")
	th, err := p.In.Runtime.GetThread(t.Context(), threadID)
	if err != nil || chat.Of(th).Agent != id {
		t.Fatalf("the chat's agent: %+v, %v", chat.Of(th), err)
	}

	// After a reload the chat still names its agent.
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `(n) => document.querySelector('#chat-header [data-chat-agent]')?.textContent === n`, name)
	waitJS(t, pg, `() => (document.querySelector('#messages .msg-assistant .msg-body')?.textContent || '').includes('documented in BUILD.md')`)
	// A chat of the built-in agent names none.
	pg = p.page("/t/" + p.newThread())
	if pg.MustEval(`() => !!document.querySelector('#chat-header [data-chat-agent]')`).Bool() {
		t.Error("a chat of the built-in agent names an agent in its header")
	}
}
