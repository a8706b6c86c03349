package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// The chat is a tree: an early message is edited in place, a reply is
// regenerated with another model, ‹ n/m › flips between the versions and
// the rest of the chat follows, the choice survives a reload and a
// restart, and Fork starts a new chat from a message.
func TestEditRegenerateSwitchFork(t *testing.T) {
	p := startParley(t)
	// A second model: the scripted server behind openai-compatible.
	st := p.page("/settings")
	waitJS(t, st, `() => document.querySelector('#mcp-servers[data-live]') !== null`)
	st.MustElement("#base-openai-compatible").MustInput(p.Model.URL())
	st.MustElement(`#provider-openai-compatible form[action$="/base"] button`).MustClick()
	waitJS(t, st, `() => document.querySelector('[data-flash="openai-compatible"]')?.innerText.includes('Address saved')`)

	id := p.newThread()
	pg := p.page("/t/" + id)
	chatText := `() => [...document.querySelectorAll('#messages > article .msg-body')].map(b => b.innerText.trim()).join(' | ')`
	turn := func(text, reply string) {
		t.Helper()
		p.Model.Push(scripted.Reply{Text: reply})
		n := len(p.messages(id)) + 2
		sendMsg(t, pg, text)
		waitJS(t, pg, `(n) => document.querySelectorAll('#messages > article[data-status=complete]').length === n`, n)
	}
	turn("first question", "First answer.")
	turn("second question", "Second answer.")
	turn("third question", "Third answer.")

	// Edit the second question in place.
	second := `[...document.querySelectorAll('#messages > article.msg-user')][1]`
	pg.MustEval(`() => ` + second + `.querySelector('.msg-rewrite').click()`)
	waitJS(t, pg, `() => document.querySelector('.msg-editor textarea')?.value === 'second question'`)
	waitJS(t, pg, `() => document.activeElement?.closest('.msg-editor') !== null`)
	pg.MustScreenshot(artifact("branch-editor.png"))
	p.Model.Push(scripted.Reply{Text: "Edited answer."})
	ed := pg.MustElement(".msg-editor textarea")
	ed.MustSelectAllText().MustInput("second question, <b>rephrased</b>")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, chatText+` === 'first question | First answer. | second question, <b>rephrased</b> | Edited answer.'`)
	if n := pg.MustEval(`() => document.querySelectorAll('#messages b').length`).Int(); n != 0 {
		t.Fatal("the edited text was rendered as markup")
	}
	reqs := p.Model.Requests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role != "system" {
			sent = append(sent, m.Role+":"+m.Content)
		}
	}
	if got := strings.Join(sent, " | "); got != "user:first question | assistant:First answer. | user:second question, <b>rephrased</b>" {
		t.Fatalf("the edit sent the model: %s", got)
	}
	waitJS(t, pg, `() => `+second+`.querySelector('.version-count')?.innerText === '2/2'`)

	// Regenerate the new reply with another model.
	last := `[...document.querySelectorAll('#messages > article.msg-assistant')].pop()`
	pg.MustEval(`() => ` + last + `.querySelector('.msg-regenerate-with').click()`)
	waitJS(t, pg, `() => document.querySelector('.regen-model') !== null`)
	p.Model.Push(scripted.Reply{Text: "Regenerated answer."})
	waitJS(t, pg, `() => [...document.querySelectorAll('.regen-model')].some(b => b.innerText === 'openai-compatible/scripted')`)
	pg.MustEval(`() => [...document.querySelectorAll('.regen-model')].find(b => b.innerText === 'openai-compatible/scripted').click()`)
	waitJS(t, pg, chatText+`.endsWith('| Regenerated answer.')`)
	if got := evalString(pg, `() => `+last+`.querySelector('.msg-model')?.innerText`); got != "openai-compatible/scripted" {
		t.Fatalf("regenerated with %q, want openai-compatible/scripted", got)
	}
	waitJS(t, pg, `() => `+last+`.querySelector('.version-count')?.innerText === '2/2'`)
	pg.MustScreenshot(artifact("branch-versions.png"))

	// Back to the first version of the second question: its whole branch.
	pg.MustEval(`() => ` + second + `.querySelector('.version-prev').click()`)
	waitJS(t, pg, chatText+` === 'first question | First answer. | second question | Second answer. | third question | Third answer.'`)
	waitJS(t, pg, `() => `+second+`.querySelector('.version-count')?.innerText === '1/2'`)

	// Kept across a reload and a restart.
	pg.MustReload()
	waitJS(t, pg, chatText+` === 'first question | First answer. | second question | Second answer. | third question | Third answer.'`)
	p = p.restart()
	pg = p.page("/t/" + id)
	waitJS(t, pg, chatText+` === 'first question | First answer. | second question | Second answer. | third question | Third answer.'`)
	// The keyboard reaches the arrows.
	pg.MustEval(`() => ` + second + `.querySelector('.version-next').focus()`)
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, chatText+` === 'first question | First answer. | second question, <b>rephrased</b> | Regenerated answer.'`)

	// Fork from the first answer: a new chat with that much of it.
	pg.MustEval(`() => document.querySelectorAll('#messages > article.msg-assistant')[0].querySelector('.msg-fork').click()`)
	waitJS(t, pg, `(id) => !location.pathname.endsWith(id) && document.querySelectorAll('#messages > article').length === 2`, id)
	waitJS(t, pg, chatText+` === 'first question | First answer.'`)
	if got := evalString(pg, `() => document.querySelector('.fork-note a')?.innerText`); got != "first question" {
		t.Fatalf("the fork does not say where it came from: %q", got)
	}
	pg.MustScreenshot(artifact("branch-fork.png"))
	// The link goes back to the source chat, at the message forked from.
	pg.MustElement(".fork-note a").MustClick()
	waitJS(t, pg, `(id) => location.pathname.endsWith(id) && document.querySelector('#messages .msg-hit') !== null`, id)
}

// Leaving a branch whose reply wrote a file offers to put the file back;
// a file changed outside Parley since is named and left alone until the
// user says to overwrite it.
func TestRegenerateRewindsFiles(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.target().yolo(t, id)
	notes := filepath.Join(p.dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"notes.txt","content":"changed by the agent\n"}`}}})
	p.Model.Push(scripted.Reply{Text: "Done."})
	pg := p.page("/t/" + id)
	sendMsg(t, pg, "rewrite the notes")
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages > article.msg-assistant')].pop()?.dataset.status === 'complete' && [...document.querySelectorAll('#messages > article.msg-assistant')].pop().innerText.includes('Done.')`)
	if b, _ := os.ReadFile(notes); string(b) != "changed by the agent\n" {
		t.Fatalf("the agent's write: %q", b)
	}
	if err := os.WriteFile(notes, []byte("the user's own edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	last := `[...document.querySelectorAll('#messages > article.msg-assistant')].pop()`
	pg.MustEval(`() => ` + last + `.querySelector('.msg-regenerate').click()`)
	waitJS(t, pg, `() => document.querySelector('.rewind-box .rewind-files')?.innerText.includes('notes.txt')`)
	if got := evalString(pg, `() => document.querySelector('.rewind-box .rewind-files').innerText`); !strings.Contains(got, "changed outside Parley since") {
		t.Fatalf("the dialog does not say the file changed: %q", got)
	}
	if got := evalString(pg, `() => document.querySelector('.rewind-box .rewind-note').innerText`); !strings.Contains(got, "execute_command") {
		t.Fatalf("the dialog does not say commands stay: %q", got)
	}
	pg.MustScreenshot(artifact("rewind-dialog.png"))
	pg.MustElement(`.rewind-box input[value=restore]`).MustClick()
	pg.MustElement(`.rewind-box button[type=submit]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#composer-error')?.innerText.includes('notes.txt')`)
	if b, _ := os.ReadFile(notes); string(b) != "the user's own edit\n" {
		t.Fatalf("a refused rewind changed the file: %q", b)
	}

	p.Model.Push(scripted.Reply{Text: "Answered again, files as they were."})
	pg.MustElement(`.rewind-box input[name=overwrite]`).MustClick()
	pg.MustElement(`.rewind-box button[type=submit]`).MustClick()
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages > article.msg-assistant .msg-body')].pop()?.innerText.includes('Answered again, files as they were.')`)
	if b, _ := os.ReadFile(notes); string(b) != "original\n" {
		t.Fatalf("the rewind left %q", b)
	}
	waitJS(t, pg, `() => `+last+`.querySelector('.version-count')?.innerText === '2/2'`)
}

// Editing or regenerating while the agent waits for an answer asks before
// it ends that run, and keeps what was typed.
func TestBranchAsksBeforeEndingAWaitingRun(t *testing.T) {
	p := startParley(t)
	pg, _ := ask(t, p, `{"question":"Which port?"}`)
	user := `document.querySelector('#messages > article.msg-user')`
	pg.MustEval(`() => ` + user + `.querySelector('.msg-rewrite').click()`)
	waitJS(t, pg, `() => document.activeElement?.closest('.msg-editor') !== null`)
	pg.MustElement(".msg-editor textarea").MustSelectAllText().MustInput("set it up on port 8080")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('.msg-editor .wait-note') !== null`)
	if got := evalString(pg, `() => document.querySelector('.msg-editor textarea').value`); got != "set it up on port 8080" {
		t.Fatalf("asking lost the text: %q", got)
	}
	pg.MustScreenshot(artifact("branch-ask-stop.png"))
	// (The model's next answer is the one ask queued for after the question.)
	pg.MustElement(".msg-editor textarea").MustFocus()
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages > article.msg-assistant')].pop()?.innerText.includes('Thanks, noted.')`)
	waitJS(t, pg, `() => `+user+`.querySelector('.version-count')?.innerText === '2/2'`)

	// Regenerate a reply that waits: asked, then done.
	pg2, _ := ask(t, p, `{"question":"Which colour?"}`)
	last := `[...document.querySelectorAll('#messages > article.msg-assistant')].pop()`
	pg2.MustEval(`() => ` + last + `.querySelector('.msg-regenerate').click()`)
	waitJS(t, pg2, `() => document.querySelector('.rewind-box .wait-note') !== null`)
	pg2.MustElement(`.rewind-box button[type=submit]`).MustClick()
	waitJS(t, pg2, `() => `+last+`?.innerText.includes('Thanks, noted.') && `+last+`.querySelector('.version-count')?.innerText === '2/2'`)
}
