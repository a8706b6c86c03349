package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// noNativeDialogs makes the page's prompt, confirm and alert record their
// use and refuse (a native dialog would block the page); nativeDialogs
// reads what was called.
const noNativeDialogs = `() => {
  for (const name of ["prompt", "confirm", "alert"]) {
    window[name] = () => {
      sessionStorage.setItem("native-dialogs", (sessionStorage.getItem("native-dialogs") || "") + name + " ");
      throw new Error("window." + name + " called");
    };
  }
}`

// dialogPage opens path with the browser's own dialogs replaced by
// noNativeDialogs, on every document the page loads.
func dialogPage(t *testing.T, p *parley, path string) *rod.Page {
	t.Helper()
	pg := incognito(t).MustPage("")
	pg.MustEvalOnNewDocument(`(` + noNativeDialogs + `)()`)
	pg.MustNavigate(signedIn(p.URL + path))
	pg.MustWaitLoad()
	t.Cleanup(func() {
		if got := evalString(pg, `() => sessionStorage.getItem("native-dialogs") || ""`); got != "" {
			t.Errorf("the page called the browser's own dialogs: %s", got)
		}
	})
	return pg
}

// say sends text in the open chat and waits for the scripted reply.
func say(t *testing.T, pg *rod.Page, text string) {
	t.Helper()
	n := pg.MustEval(`() => document.querySelectorAll('#messages .msg-assistant[data-status=complete]').length`).Int()
	pg.MustElement("#draft").MustInput(text)
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `(n) => document.querySelectorAll('#messages .msg-assistant[data-status=complete]').length > n`, n)
}

// Rename in the page: the dialog opens with the title selected, Esc
// cancels, Enter saves; a title is text, never markup.
func TestDialogRename(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	old := `Old <b>title</b> "quoted"`
	if _, err := p.In.Runtime.UpdateThread(t.Context(), id, agentcore.ThreadPatch{Title: &old}); err != nil {
		t.Fatal(err)
	}
	pg := dialogPage(t, p, "/t/"+id)
	row := "#thread-" + id

	open := func() {
		t.Helper()
		pg.MustElement(row).MustHover()
		pg.MustElement(row + " .rename").MustClick()
		waitJS(t, pg, `() => document.querySelector('#rename-dialog')?.open === true`)
	}
	open()
	if got := evalString(pg, `() => { const i = document.querySelector('#rename-dialog input'); return document.activeElement === i && i.selectionStart === 0 && i.selectionEnd === i.value.length ? i.value : 'not selected: ' + i.value }`); got != old {
		t.Fatalf("the rename box holds %q, want the current title %q, all selected and focused", got, old)
	}
	pg.MustScreenshot(artifact("rename-dialog.png"))

	// Esc cancels: nothing changes.
	pg.Keyboard.MustType(input.KeyX)
	pg.Keyboard.MustType(input.Escape)
	waitJS(t, pg, `() => document.querySelector('#rename-dialog').open === false`)
	time.Sleep(300 * time.Millisecond)
	if th, err := p.In.Store.GetThread(t.Context(), id); err != nil || th.Title != old {
		t.Fatalf("after Esc the title is %q (%v), want it unchanged", th.Title, err)
	}

	// Enter saves.
	open()
	const renamed = `<img src=x onerror="document.title='pwned'"> Renamed`
	pg.MustElement("#rename-dialog input").MustSelectAllText().MustInput(renamed)
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `(sel, want) => document.querySelector(sel + ' .thread-title')?.textContent === want`, row, renamed)
	waitJS(t, pg, `(want) => document.querySelector('#chat-header .chat-title')?.textContent === want`, renamed)
	waitJS(t, pg, `() => document.querySelector('#rename-dialog').open === false`)
	if n := pg.MustEval(`() => document.querySelectorAll('#sidebar img[src=x], #chat-header img[src=x]').length`).Int(); n != 0 {
		t.Fatal("a title was rendered as markup")
	}
	if th, _ := p.In.Store.GetThread(t.Context(), id); th.Title != renamed {
		t.Fatalf("stored title %q, want %q", th.Title, renamed)
	}
}

// Delete removes the chat at once and offers Undo, which brings it back
// with its messages: from another chat, and from the chat itself.
func TestDialogDeleteUndo(t *testing.T) {
	p := startParley(t)
	first, second := p.newThread(), p.newThread()
	pg := dialogPage(t, p, "/t/"+first)
	say(t, pg, "remember this")
	before := len(p.messages(first))
	if before < 2 {
		t.Fatalf("%d messages stored, want the message and its reply", before)
	}

	// From another chat: the row goes, the toast offers Undo.
	pg.MustNavigate(signedIn(p.URL + "/t/" + second))
	pg.MustWaitLoad()
	row := "#thread-" + first
	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .delete").MustClick()
	waitJS(t, pg, `(sel) => { const r = document.querySelector(sel); return r === null || r.hidden }`, row)
	waitJS(t, pg, `() => document.querySelector('#toasts .toast')?.innerText.includes('Chat deleted')`)
	pg.MustScreenshot(artifact("delete-undo-toast.png"))
	if _, err := p.In.Store.GetThread(t.Context(), first); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("a deleted chat still reads as there: %v", err)
	}
	if got := evalString(pg, `() => location.pathname`); got != "/t/"+second {
		t.Fatalf("deleting another chat moved the page to %s", got)
	}
	pg.MustElement("#toasts .toast-undo").MustClick()
	waitJS(t, pg, `(sel) => { const r = document.querySelector(sel); return r !== null && !r.hidden }`, row)
	waitJS(t, pg, `() => document.querySelector('#toasts .toast') === null`)
	if _, err := p.In.Store.GetThread(t.Context(), first); err != nil {
		t.Fatalf("after Undo: %v", err)
	}
	if got := len(p.messages(first)); got != before {
		t.Fatalf("after Undo %d messages, want %d", got, before)
	}

	// The open chat: the page goes to the new-chat screen, the toast follows;
	// Undo opens the chat again, its messages there.
	pg.MustNavigate(signedIn(p.URL + "/t/" + first))
	pg.MustWaitLoad()
	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .delete").MustClick()
	waitJS(t, pg, `() => location.pathname === '/'`)
	pg.MustWaitLoad()
	waitJS(t, pg, `(sel) => document.querySelector(sel) === null`, row)
	waitJS(t, pg, `() => document.querySelector('#toasts .toast')?.innerText.includes('Chat deleted')`)
	pg.MustElement("#toasts .toast-undo").MustClick()
	waitJS(t, pg, `(id) => location.pathname === '/t/' + id`, first)
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#messages')?.innerText.includes('remember this')`)
	waitJS(t, pg, `(sel) => document.querySelector(sel) !== null`, row)
	if got := len(p.messages(first)); got != before {
		t.Fatalf("after Undo %d messages, want %d", got, before)
	}
}

// Delete without Undo: the toast goes after a few seconds and the chat is
// deleted for good soon after; one deleted just before a restart is gone
// after it.
func TestDialogDeleteForGood(t *testing.T) {
	p := startParley(t)
	first, second := p.newThread(), p.newThread()
	pg := dialogPage(t, p, "/t/"+first)
	say(t, pg, "soon gone")
	pg.MustNavigate(signedIn(p.URL + "/t/" + second))
	pg.MustWaitLoad()
	row := "#thread-" + first
	pg.MustElement(row).MustHover()
	pg.MustElement(row + " .delete").MustClick()
	waitJS(t, pg, `() => document.querySelector('#toasts .toast') !== null`)
	start := time.Now()
	waitJS(t, pg, `() => document.querySelector('#toasts .toast') === null`)
	if d := time.Since(start); d < 4*time.Second || d > 9*time.Second {
		t.Errorf("the Undo toast showed for %v, want about 6 s", d)
	}
	// Purged: its messages are gone with it, and Undo is refused.
	deadline := time.Now().Add(15 * time.Second)
	for len(p.messages(first)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("a deleted chat's messages are still stored 20 s after")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := p.In.Runtime.RestoreThread(t.Context(), first); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("restoring a chat deleted for good: %v", err)
	}
	if status, _ := p.postJSON(t, "/t/"+first+"/restore", ""); status != 404 {
		t.Fatalf("Undo after the delay answered %d, want 404", status)
	}

	// Deleted, then the app quits at once: gone when it starts again.
	pg.MustElement("#draft").MustInput("also soon gone")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	if err := p.In.Runtime.TrashThread(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	p = p.restart()
	if n := len(p.messages(second)); n != 0 {
		t.Fatalf("a chat deleted before a restart kept %d messages", n)
	}
	if got := p.threads(); len(got) != 0 {
		t.Fatalf("chats after the restart: %v", got)
	}
}

// A decided plan keeps its decision and the user's feedback on its card,
// live and after a reload; feedback is text, never markup.
func TestPlanCardKeepsDecisionAndFeedback(t *testing.T) {
	p := startParley(t)
	pg, id := planned(t, p)
	const feedback = `Use CSS <img src=x onerror="document.title='pwned'"> variables`
	pg.MustElement(".plan-changes textarea").MustInput(feedback)
	p.Model.Push(scripted.Reply{Text: "Revising."})
	pg.MustElement(".plan-request").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Revising.')`)
	card := p.sel("p1") + " [data-plan]"
	check := func(when string) {
		t.Helper()
		waitJS(t, pg, `(sel) => document.querySelector(sel + ' .plan-decision') !== null`, card)
		if got := evalString(pg, `(sel) => document.querySelector(sel + ' .plan-decision').textContent.trim()`, card); !strings.Contains(strings.ToLower(got), "changes requested") {
			t.Errorf("%s the decision reads %q, want it to say changes were requested", when, got)
		}
		if got := evalString(pg, `(sel) => document.querySelector(sel + ' .plan-feedback')?.textContent || ''`, card); !strings.Contains(got, feedback) {
			t.Errorf("%s the feedback reads %q, want %q", when, got, feedback)
		}
		if n := pg.MustEval(`(sel) => document.querySelectorAll(sel + ' img[src=x]').length`, card).Int(); n != 0 {
			t.Errorf("%s the feedback was rendered as markup", when)
		}
		if n := pg.MustEval(`(sel) => document.querySelectorAll(sel + ' .plan-actions, ' + sel + ' .plan-changes').length`, card).Int(); n != 0 {
			t.Errorf("%s the decided plan still offers its buttons", when)
		}
	}
	check("after the decision,")
	pg.MustScreenshot(artifact("plan-decided.png"))
	pg.MustNavigate(signedIn(p.URL + "/t/" + id))
	pg.MustWaitLoad()
	check("after a reload,")

	// A plain rejection reads as rejected, also after a reload.
	pg, id = planned(t, p)
	p.Model.Push(scripted.Reply{Text: "Waiting."})
	pg.MustElement(".plan-reject").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Waiting.')`)
	pg.MustNavigate(signedIn(p.URL + "/t/" + id))
	pg.MustWaitLoad()
	waitJS(t, pg, `(sel) => /rejected/i.test(document.querySelector(sel + ' .plan-decision')?.textContent || '')`, p.sel("p1")+" [data-plan]")
}
