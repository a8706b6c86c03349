package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore/scripted"
	"parley/toolkit"
)

// Working memory (issue 16 item 4), end to end: the scripted model updates
// it with updateWorkingMemory and the chat shows "Memory updated", which
// opens on the change (markup in it stays text); Settings → Memory shows
// the document, the user edits it and the next chat's model is given the
// edit; turned off, the model is offered no tool and given no memory; the
// real mastra CLI reads and updates it (mastra api memory current get|update).
func TestWorkingMemory(t *testing.T) {
	p := startParley(t)
	ctx := t.Context()
	doc := strings.Replace(toolkit.DefaultWorkingMemoryTemplate, "**First Name**: ", "**First Name**: Ada <img src=x onerror=alert(1)>", 1)
	args, _ := json.Marshal(map[string]string{"memory": doc})
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "wm", Name: toolkit.UpdateWorkingMemoryName, Args: string(args)}}},
		scripted.Reply{Text: "Nice to meet you, Ada."})
	id := p.newThread()
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "I'm Ada.")
	line := `.tool-card[data-tool-name="updateWorkingMemory"]`
	waitJS(t, pg, `(sel) => document.querySelector(sel)?.querySelector('.tool-title')?.innerText.trim() === 'Memory updated'`, line)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('Nice to meet you')`)
	if got := systemText(p); !strings.Contains(got, "WORKING_MEMORY_SYSTEM_INSTRUCTION") {
		t.Fatalf("the model was not given the working memory instruction:\n%s", got)
	}
	// Opened, the line shows the change; the markup in it is text.
	pg.MustElement(line + " > summary").MustClick()
	waitJS(t, pg, `(sel) => document.querySelector(sel + ' .diff')?.innerText.includes('Ada <img src=x onerror=alert(1)>')`, line)
	if n := evalString(pg, `(sel) => String(document.querySelectorAll(sel + ' img').length)`, line); n != "0" {
		t.Fatalf("the memory's markup became %s elements", n)
	}
	pg.MustScreenshot(artifact("memory-updated.png"))

	// Settings → Memory shows it; the user edits it.
	sp := p.page("/settings#memory")
	if got := evalString(sp, `() => document.querySelector('#memory-text').value`); got != doc {
		t.Fatalf("Settings shows %q, want %q", got, doc)
	}
	edited := strings.Replace(doc, "**Location**: ", "**Location**: London", 1)
	sp.MustElement("#memory-text").MustSelectAllText().MustInput(edited)
	sp.MustElement("[data-memory-save]").MustClick()
	waitJS(t, sp, `() => document.querySelector('[data-flash=memory]')?.innerText.includes('Saved')`)
	if got, _, _, _ := p.In.Store.WorkingMemory(ctx, "default"); got != edited {
		t.Fatalf("stored %q after the edit", got)
	}
	sp.MustScreenshot(artifact("memory-settings.png"))

	// The next chat reads the edit.
	id2 := p.newThread()
	pg2 := p.page("/t/" + id2)
	p.Model.Push(scripted.Reply{Text: "You live in London."})
	sendMsg(t, pg2, "Where do I live?")
	waitJS(t, pg2, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('London')`)
	if got := systemText(p); !strings.Contains(got, "<working_memory_data>\n"+edited+"\n</working_memory_data>") {
		t.Fatalf("the next chat was not given the edit:\n%s", got)
	}

	// The real mastra CLI reads and updates it.
	node, bin := findMastraCLI(t)
	mastra := mastraCLIFor(t, node, bin, p.URL)
	out, ok := mastra(t, "memory", "current", "get", `{"threadId":"`+id2+`","agentId":"parley"}`)
	if !ok || at(out, "data", "workingMemory") != edited || at(out, "data", "threadExists") != true {
		t.Fatalf("mastra memory current get: %v", out)
	}
	fromCLI := edited + "\n- Prefers short answers."
	body, _ := json.Marshal(map[string]string{"threadId": id2, "agentId": "parley", "workingMemory": fromCLI})
	if out, ok = mastra(t, "memory", "current", "update", string(body)); !ok || at(out, "data", "success") != true {
		t.Fatalf("mastra memory current update: %v", out)
	}
	if got, _, _, _ := p.In.Store.WorkingMemory(ctx, "default"); got != fromCLI {
		t.Fatalf("stored %q after the CLI's update", got)
	}
	if _, ok = mastra(t, "memory", "current", "update", `{"threadId":"no-such-thread","agentId":"parley","workingMemory":"x"}`); ok {
		t.Fatal("an update of an unknown thread succeeded")
	}

	// Off: no tool offered, nothing given.
	sp = p.page("/settings#memory")
	sp.MustElement("#memory-on").MustClick()
	waitJS(t, sp, `() => document.querySelector('[data-flash=memory]')?.innerText.includes('Memory is off')`)
	p.Model.Push(scripted.Reply{Text: "Hello."})
	sendMsg(t, pg2, "Hi again")
	waitJS(t, pg2, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('Hello.')`)
	reqs := p.Model.Requests()
	if last := reqs[len(reqs)-1]; last.HasTool(toolkit.UpdateWorkingMemoryName) {
		t.Error("memory off, but the tool is offered")
	}
	if got := systemText(p); strings.Contains(got, "WORKING_MEMORY") || strings.Contains(got, "London") {
		t.Errorf("memory off, but the model was given it:\n%s", got)
	}
	if out, ok = mastra(t, "memory", "current", "update", string(body)); ok {
		t.Errorf("memory off, but the CLI's update succeeded: %v", out)
	}
}
