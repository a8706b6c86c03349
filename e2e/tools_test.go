package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

type noteIn struct {
	Path    string `json:"path" desc:"Where to write the note"`
	Content string `json:"content" desc:"The note"`
}

type noteOut struct {
	Written int `json:"written"`
}

func noteTool() *agentcore.Tool {
	return agentcore.NewTool("write_note", "Write a note to a file.",
		func(ctx context.Context, in noteIn, tc *agentcore.ToolContext) (noteOut, error) {
			return noteOut{Written: len(in.Content)}, nil
		})
}

// A tool card appears while the model is still writing the call: the path
// shows first, the content grows, then the result lands and the card folds.
func TestToolCardStreamsArguments(t *testing.T) {
	p := startParley(t, map[string]*agentcore.Tool{"write_note": noteTool()})
	id := p.newThread()
	content := strings.Repeat("line of the note\\n", 30)
	p.Model.Push(
		scripted.Reply{Text: "Writing it now.", ToolCalls: []scripted.ToolCall{{ID: "call_1", Name: "write_note",
			Args: `{"path":"notes/today.md","content":"` + content + `"}`}}, ChunkSize: 12, Delay: 60 * time.Millisecond},
		scripted.Reply{Text: "Saved the note."},
	)
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("take a note")
	pg.Keyboard.MustType(input.Enter)

	card := p.card("call_1")
	waitJS(t, pg, `() => { const c = `+card+`; return c && c.dataset.state === 'input-streaming' && c.dataset.toolName === 'write_note' && c.innerText.includes('notes/today.md') }`)
	first := evalString(pg, `() => `+card+`.innerText`)
	pg.MustScreenshot(artifact("tool-card-streaming.png"))
	waitJS(t, pg, `(n) => `+card+`.dataset.state === 'input-streaming' && `+card+`.innerText.length > n + 40`, len(first))
	waitJS(t, pg, `() => `+card+`.dataset.state === 'done' && !`+card+`.open`)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	if got := evalString(pg, `() => `+card+`.querySelector('.tool-result').textContent`); got != "written: 510" {
		t.Fatalf("result shown: %q", got)
	}
	if got := evalString(pg, `() => `+card+`.querySelector('.tool-details').textContent`); !strings.Contains(got, `"written": 510`) {
		t.Fatalf("raw result in Details: %q", got)
	}
	reply := evalString(pg, `() => document.querySelector('#messages .msg-assistant .msg-body').innerText`)
	if !strings.Contains(reply, "Writing it now.") || !strings.Contains(reply, "Saved the note.") {
		t.Fatalf("reply text: %q", reply)
	}
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => `+card+` && `+card+`.dataset.state === 'done'`)
}
