package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rod/rod"

	"parley/agentcore/scripted"
)

// The demo's tasks showcase runs once, whatever the user answers: the task
// list, one write_file approval, and after Allow, Deny with a reason or a
// message that denies it, a closing sentence and the end of the run. The
// task list that the runtime shows the model after every step (as a user
// message) must not read to the demo as the user asking again.
func TestDemoTasksFlowEndsAfterOneApproval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  func(t *testing.T, pg *rod.Page)
		closing string // what the last reply ends with
		written bool
		told    string // in what the model was told about the call
	}{
		{
			name:    "allow",
			answer:  func(t *testing.T, pg *rod.Page) { pg.MustElement("[data-approval] .approve-once").MustClick() },
			closing: "Written.", written: true, told: "Wrote parley-demo/hello.go",
		},
		{
			name: "deny with a reason",
			answer: func(t *testing.T, pg *rod.Page) {
				pg.MustElement("[data-approval] .approval-deny input[name=reason]").MustInput("not in this folder")
				pg.MustElement("[data-approval] .approval-deny .deny").MustClick()
			},
			closing: "Nothing was written", told: "not in this folder",
		},
		{
			name:    "a message denies it",
			answer:  func(t *testing.T, pg *rod.Page) { sendMsg(t, pg, "please write it somewhere else") },
			closing: "Nothing was written", told: "please write it somewhere else",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startParley(t)
			p.Model.SetDefault(scripted.Demo)
			pg := p.page("/t/" + p.newThread())
			sendMsg(t, pg, "Break this into tasks please")

			waitJS(t, pg, `() => document.querySelectorAll('#task-panel [data-task-id]').length > 0`)
			writes := `document.querySelectorAll('#messages [data-tool-name=write_file]').length`
			waitJS(t, pg, `() => document.querySelector('#messages [data-tool-name=write_file] [data-approval]') !== null`)
			tc.answer(t, pg)

			// Either the run ends with its closing sentence, or (the bug) the
			// approval comes back in a second write_file card.
			last := `[...document.querySelectorAll('#messages .msg-assistant')].pop()`
			waitJS(t, pg, `(closing) => `+writes+` > 1 || (`+last+`?.dataset.status === 'complete' && `+last+`.innerText.includes(closing) && !document.querySelector('#composer-actions #stop'))`, tc.closing)
			pg.MustScreenshot(artifact("demo-tasks-" + strings.ReplaceAll(tc.name, " ", "-") + ".png"))
			if n := pg.MustEval(`() => ` + writes).Int(); n != 1 {
				t.Fatalf("%d write_file cards, want 1: the demo asked again", n)
			}
			if pg.MustEval(`() => document.querySelector('[data-approval]') !== null`).Bool() {
				t.Fatal("an approval still waits after the run ended")
			}
			reqs := p.Model.Requests()
			told := ""
			for _, m := range reqs[len(reqs)-1].Messages {
				if m.Role == "tool" {
					told = m.Content // the last result: write_file's
				}
			}
			if !strings.Contains(told, tc.told) {
				t.Errorf("the model was told %q, want it to contain %q", told, tc.told)
			}
			_, err := os.Stat(filepath.Join(p.dir, "parley-demo", "hello.go"))
			if written := err == nil; written != tc.written {
				t.Errorf("parley-demo/hello.go written: %v, want %v", written, tc.written)
			}
		})
	}
}
