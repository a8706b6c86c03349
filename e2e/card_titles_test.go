package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// Tool cards read as what was done: a human title, the structured body,
// and the raw arguments and result only behind a collapsed Details, shown
// as typed (`2>&1`, not `2\u003e\u00261`). A task list streams into its
// card as rows, not JSON.
func TestCardTitlesAndDetails(t *testing.T) {
	p := startParley(t)
	if err := os.WriteFile(filepath.Join(p.dir, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	pg := p.page("/t/" + id)
	pg.MustElement("#yolo-switch").MustClick() // this chat runs tools without asking
	waitJS(t, pg, `() => document.querySelector('#yolo-switch').classList.contains('on')`)

	tasks := `{"tasks":[` +
		`{"content":"Read the notes","status":"completed","activeForm":"Reading the notes"},` +
		`{"content":"Rewrite the notes","status":"in_progress","activeForm":"Rewriting the notes"},` +
		`{"content":"Check the build","status":"pending","activeForm":"Checking the build"}]}`
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "t1", Name: "task_write", Args: tasks}}, ChunkSize: 12, Delay: 60 * time.Millisecond},
		scripted.Reply{Text: "Planned.", ToolCalls: []scripted.ToolCall{
			{ID: "w1", Name: "write_file", Args: `{"path":"notes.txt","content":"one\n2 > 1 & <b>three</b>\n"}`},
			{ID: "x1", Name: "execute_command", Args: `{"command":"echo built 2>&1"}`},
		}},
		scripted.Reply{Text: "All done."},
	)
	sendMsg(t, pg, "tidy the notes")

	// While task_write is written, its card lists rows, never JSON.
	tcard := p.card("t1")
	waitJS(t, pg, `() => `+tcard+`?.dataset.state === 'input-streaming' && `+tcard+`.querySelector('.tool-tasks li') !== null`)
	if got := evalString(pg, `() => `+tcard+`.innerText`); strings.Contains(got, `{"`) || strings.Contains(got, `"content"`) || strings.Contains(got, "tasks:") {
		t.Fatalf("task card streams JSON: %q", got)
	}
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('All done.')`)
	rows := evalString(pg, `() => [...`+tcard+`.querySelectorAll('.tool-tasks li')].map(l => l.dataset.status + ':' + l.textContent.replace(/\s+/g, ' ').trim()).join('|')`)
	if rows != "completed:✓ Read the notes|in_progress:▸ Rewriting the notes|pending:○ Check the build" {
		t.Fatalf("task rows: %q", rows)
	}
	if got := evalString(pg, `() => `+tcard+`.querySelector('.tool-title').textContent.replace(/\s+/g, ' ').trim()`); got != "Updated the task list" {
		t.Fatalf("task card title %q", got)
	}

	// write_file: titled in words, the raw name kept for automation, the
	// raw JSON hidden until Details opens.
	w := p.card("w1")
	waitJS(t, pg, `() => `+w+`?.dataset.state === 'done'`)
	if got := evalString(pg, `() => `+w+`.querySelector('.tool-title').textContent.replace(/\s+/g, ' ').trim()`); got != "Write notes.txt" {
		t.Fatalf("write card title %q", got)
	}
	if got := evalString(pg, `() => `+w+`.dataset.toolName`); got != "write_file" {
		t.Fatalf("data-tool-name %q", got)
	}
	evalString(pg, `() => { `+w+`.open = true; return '' }`)
	visible := evalString(pg, `() => `+w+`.innerText`)
	if strings.Contains(visible, `"before"`) || strings.Contains(visible, `"content"`) || strings.Contains(visible, `\u003`) || strings.Contains(visible, "@@") {
		t.Fatalf("raw JSON shows before Details is opened: %q", visible)
	}
	if !strings.Contains(visible, "2 > 1 & <b>three</b>") {
		t.Fatalf("the diff does not show the new line as written: %q", visible)
	}
	pg.MustElement(p.sel("w1") + ` .tool-details > summary`).MustClick()
	waitJS(t, pg, `() => `+w+`.querySelector('.tool-details').open`)
	raw := evalString(pg, `() => `+w+`.querySelector('.tool-details').innerText`)
	if !strings.Contains(raw, `"content": "one\n2 > 1 & <b>three</b>\n"`) || !strings.Contains(raw, `"before": "one\ntwo\n"`) || strings.Contains(raw, `\u00`) {
		t.Fatalf("details: %q", raw)
	}
	if n := evalString(pg, `() => String(`+w+`.querySelectorAll('.tool-details b').length)`); n != "0" {
		t.Fatal("markup from the arguments was rendered")
	}

	// execute_command: "Ran" and the command as typed, its output below.
	x := p.card("x1")
	waitJS(t, pg, `() => `+x+`?.dataset.state === 'done'`)
	if got := evalString(pg, `() => `+x+`.querySelector('.tool-title').textContent.replace(/\s+/g, ' ').trim()`); got != "Ran echo built 2>&1" {
		t.Fatalf("command card title %q", got)
	}
	evalString(pg, `() => { `+x+`.open = true; `+x+`.querySelector('.tool-details').open = true; return '' }`)
	if got := evalString(pg, `() => `+x+`.innerText`); !strings.Contains(got, "built") || !strings.Contains(got, `"command": "echo built 2>&1"`) || strings.Contains(got, `\u003e`) {
		t.Fatalf("command card: %q", got)
	}
	evalString(pg, `() => { `+x+`.querySelector('.tool-details').open = false; `+tcard+`.open = true; return '' }`)
	pg.MustSetViewport(1280, 1500, 1, false)
	pg.MustEval(`() => { const s = document.querySelector('#scroller'); s.scrollTop = 0 }`)
	pg.MustScreenshot("/tmp/cards.png")
	pg.MustScreenshot(artifact("card-titles.png"))
}
