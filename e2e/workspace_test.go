package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

func sendMsg(t *testing.T, pg *rod.Page, text string) {
	t.Helper()
	pg.MustElement("#draft").MustInput(text)
	pg.Keyboard.MustType(input.Enter)
}

// An edit streams into its card: the path shows as soon as it has begun,
// the diff grows with the arguments; the user approves; the card then shows
// the real diff of the file.
func TestEditPreviewApproveAndFinalDiff(t *testing.T) {
	p := startParley(t)
	file := filepath.Join(p.dir, "main.go")
	orig := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	p.Model.Push(
		scripted.Reply{Text: "Changing the greeting.", ToolCalls: []scripted.ToolCall{{ID: "e1", Name: "edit_file",
			Args: `{"path":"main.go","old_str":"\tprintln(\"hello\")\n","new_str":"\tprintln(\"hello, world\")\n\tprintln(\"bye\")\n"}`}},
			ChunkSize: 6, Delay: 120 * time.Millisecond},
		scripted.Reply{Text: "Done."},
	)
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "greet the world")
	waitJS(t, pg, `() => `+p.card("e1")+`?.dataset.state === 'input-streaming' && `+p.card("e1")+`.querySelector('[data-preview-path]')?.dataset.previewPath === 'main.go'`)
	waitJS(t, pg, `() => `+p.card("e1")+`.dataset.state === 'input-streaming' && `+p.card("e1")+`.querySelector('[data-diff-line][data-kind=add]') !== null`)
	pg.MustScreenshot(artifact("edit-streaming.png"))
	// Waiting for approval, with the full arguments visible.
	waitJS(t, pg, `() => `+p.card("e1")+`.dataset.state === 'suspended' && `+p.card("e1")+`.querySelector('[data-approval]') != null`)
	if b, _ := os.ReadFile(file); string(b) != orig {
		t.Fatal("the file changed before approval")
	}
	pg.MustElement(p.sel("e1") + ` .approve-once`).MustClick()
	waitJS(t, pg, `() => `+p.card("e1")+`.dataset.state === 'done'`)
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `println("hello, world")`) {
		t.Fatalf("file after edit: %s", b)
	}
	lines := evalString(pg, `() => [...`+p.card("e1")+`.querySelectorAll('[data-diff-line]')].map(l => l.dataset.kind + ':' + l.querySelector('.dt').textContent).join('|')`)
	if !strings.Contains(lines, `del:	println("hello")`) || !strings.Contains(lines, `add:	println("hello, world")`) || !strings.Contains(lines, "ctx:func main() {") {
		t.Fatalf("final diff: %s", lines)
	}
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Done.')`)
}

// A file being written shows its tail in the card highlighted, in the
// code styles' colours as a reply's code block is: its keywords are not the
// colour of its plain text.
func TestWritePreviewIsHighlighted(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	content := "package main\n\nfunc main() {\n" + strings.Repeat("\tif ok {\n\t\treturn\n\t}\n", 12) + "}\n"
	quoted, _ := json.Marshal(content)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"main.go","content":` + string(quoted) + `}`}},
			ChunkSize: 8, Delay: 40 * time.Millisecond},
		scripted.Reply{Text: "Written."},
	)
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "write main.go")
	// The colours are read as soon as a keyword shows: the preview goes
	// when the call is whole.
	pre := p.card("w1") + `?.querySelector('.code-preview pre')`
	waitJS(t, pg, `() => { const pre = `+pre+`, k = pre?.querySelector('[class^=k]');
		if (k) window.__colours = getComputedStyle(k).color + ' / ' + getComputedStyle(pre).color; return !!k }`)
	pg.MustScreenshot(artifact("write-preview.png"))
	colours := evalString(pg, `() => window.__colours`)
	if keyword, plain, _ := strings.Cut(colours, " / "); keyword == plain {
		t.Fatalf("the preview's keyword is drawn in its plain text's colour, %s: not highlighted", plain)
	}
}

// Always allow is remembered; Deny (with a reason) reaches the model.
func TestApprovalAlwaysAndDeny(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"a.txt","content":"one\n"}`}}},
		scripted.Reply{Text: "Wrote a."},
	)
	sendMsg(t, pg, "write a")
	waitJS(t, pg, `() => `+p.card("w1")+`?.querySelector('[data-approval]') != null`)
	pg.MustElement(p.sel("w1") + ` .approve-always`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Wrote a.')`)

	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w2", Name: "write_file", Args: `{"path":"b.txt","content":"two\n"}`}}},
		scripted.Reply{Text: "Wrote b."},
	)
	sendMsg(t, pg, "write b")
	waitJS(t, pg, `() => `+p.card("w2")+`?.dataset.state === 'done'`) // no question asked this time
	if _, err := os.Stat(filepath.Join(p.dir, "b.txt")); err != nil {
		t.Fatal(err)
	}

	// Settings lists the remembered answer; revoking it makes edits ask again.
	settings := p.page("/settings")
	waitJS(t, settings, `() => document.querySelector('[data-rule="edit"]') !== null`)
	settings.MustElement(`[data-rule="edit"] .revoke`).MustClick()
	waitJS(t, settings, `() => location.pathname === '/settings' && document.querySelector('[data-rule]') === null`)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w3", Name: "write_file", Args: `{"path":"c.txt","content":"three\n"}`}}},
		scripted.Reply{Text: "Wrote c."},
	)
	sendMsg(t, pg, "write c")
	waitJS(t, pg, `() => `+p.card("w3")+`?.querySelector('[data-approval]') != null`)
	pg.MustElement(p.sel("w3") + ` .approve-once`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Wrote c.')`)

	// A policy changed in Settings applies at once: edits now run unasked.
	settings.MustElement(`select[data-policy="edit"]`).MustSelect("allow")
	waitJS(t, settings, `() => document.querySelector('select[data-policy="edit"]').value === 'allow'`)
	settings.MustScreenshot(artifact("settings.png"))
	time.Sleep(200 * time.Millisecond)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w4", Name: "write_file", Args: `{"path":"d.txt","content":"four\n"}`}}},
		scripted.Reply{Text: "Wrote d."},
	)
	sendMsg(t, pg, "write d")
	waitJS(t, pg, `() => `+p.card("w4")+`?.dataset.state === 'done'`)

	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "x1", Name: "execute_command", Args: `{"command":"rm -rf build"}`}}},
		scripted.Reply{Text: "Understood."},
	)
	sendMsg(t, pg, "clean up")
	waitJS(t, pg, `() => `+p.card("x1")+`?.querySelector('[data-approval]') != null`)
	if cmd := evalString(pg, `() => `+p.card("x1")+`.querySelector('.preview-command').innerText`); cmd != "$ rm -rf build" {
		t.Fatalf("command shown: %q", cmd)
	}
	pg.MustElement(p.sel("x1") + ` .approval-deny input`).MustInput("keep the build")
	pg.MustElement(p.sel("x1") + ` .deny`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Understood.')`)
	if got := toolResultSeen(p, "x1"); got != "The user denied this tool call; execute_command was not run. Their reason: keep the build" {
		t.Fatalf("model told %q", got)
	}
}

// A command's output streams into its card while it runs.
func TestCommandOutputStreams(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	pg.MustElement("#yolo-switch").MustClick() // this chat runs tools without asking
	waitJS(t, pg, `() => document.querySelector('#yolo-switch').classList.contains('on')`)
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "execute_command", Args: `{"command":"for i in 1 2 3; do echo step $i; sleep 0.4; done"}`}}},
		scripted.Reply{Text: "All steps ran."},
	)
	sendMsg(t, pg, "run the steps")
	waitJS(t, pg, `() => `+p.card("c1")+`?.dataset.state === 'running' && (`+p.card("c1")+`.querySelector('.tool-progress')?.textContent || '').includes('step 1')`)
	if strings.Contains(evalString(pg, `() => `+p.card("c1")+`.querySelector('.tool-progress').textContent`), "step 3") {
		t.Fatal("the output arrived all at once")
	}
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('All steps ran.')`)
	if got := toolResultSeen(p, "c1"); !strings.Contains(got, "step 3") {
		t.Fatalf("model told %q", got)
	}
}

// A chat can work in a folder of its own: its tools use it, other chats
// keep the default.
func TestThreadWorkspace(t *testing.T) {
	p := startParley(t)
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.md"), []byte("only in the other folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := p.newThread()
	pg := p.page("/t/" + id)
	// The folder is asked for in the page, never with the browser's
	// prompt: a folder that is not one is refused in the dialog, as text.
	pg.MustElement("#workspace").MustClick()
	waitJS(t, pg, `(dir) => document.querySelector('#workspace-dialog')?.open === true && document.activeElement?.name === 'path' && document.activeElement.value === dir`, p.dir)
	bad := filepath.Join(other, "<img src=x onerror=alert(1)>")
	pg.MustElement("#workspace-dialog input[name=path]").MustSelectAllText().MustInput(bad)
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#workspace-dialog .dialog-error')?.textContent.includes('is not a folder that exists')`)
	if pg.MustHas("#workspace-dialog img") || !pg.MustElement("#workspace-dialog").MustProperty("open").Bool() {
		t.Fatal("a refused folder closed the dialog or reached it as markup")
	}
	pg.MustScreenshot(artifact("workspace-dialog.png"))
	pg.MustElement("#workspace-dialog input[name=path]").MustSelectAllText().MustInput(other)
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `(dir) => document.querySelector('#workspace').dataset.workspace === dir && !document.querySelector('#workspace-dialog').open`, other)

	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "v1", Name: "view", Args: `{"path":"notes.md"}`}}},
		scripted.Reply{Text: "Read it."},
	)
	sendMsg(t, pg, "read the notes")
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Read it.')`)
	if got := toolResultSeen(p, "v1"); !strings.Contains(got, "only in the other folder") {
		t.Fatalf("view in the chat's folder gave %q", got)
	}

	// Another chat still works in the default workspace.
	id2 := p.newThread()
	pg2 := p.page("/t/" + id2)
	if ws := evalString(pg2, `() => document.querySelector('#workspace').dataset.workspace`); ws != p.dir {
		t.Fatalf("second chat's workspace %q, want %q", ws, p.dir)
	}
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "v2", Name: "view", Args: `{"path":"notes.md"}`}}},
		scripted.Reply{Text: "Not here."},
	)
	sendMsg(t, pg2, "read the notes")
	waitJS(t, pg2, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Not here.')`)
	if got := toolResultSeen(p, "v2"); strings.Contains(got, "only in the other folder") {
		t.Fatalf("the default workspace saw the other folder: %q", got)
	}
}

// An approval waiting when Parley quits is still there after a restart and
// can be answered.
func TestApprovalSurvivesRestart(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	p.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "r1", Name: "write_file", Args: `{"path":"kept.txt","content":"kept\n"}`}}})
	sendMsg(t, pg, "write kept")
	waitJS(t, pg, `() => `+p.card("r1")+`.querySelector('[data-approval]') != null`)

	p = p.restart()
	pg = p.page("/t/" + id)
	waitJS(t, pg, `() => `+p.card("r1")+`.dataset.state === 'suspended' && `+p.card("r1")+`.querySelector('.approve-once') != null`)
	p.Model.Push(scripted.Reply{Text: "Kept it."})
	pg.MustElement(p.sel("r1") + ` .approve-once`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('Kept it.')`)
	if b, err := os.ReadFile(filepath.Join(p.dir, "kept.txt")); err != nil || string(b) != "kept\n" {
		t.Fatalf("after approving across a restart: %q %v", b, err)
	}
}
