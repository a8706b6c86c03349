package ui_test

import (
	"strings"
	"sync"
	"testing"

	"parley/agentcore/scripted"
)

// settingsRaceRounds is how many times the two writers race: enough that a
// read-copy-write of the thread's settings loses an update on most runs.
const settingsRaceRounds = 100

// Two writers of a chat's settings at once — YOLO switched on in one tab
// while the plan is approved in another — both land: the chat ends in Build
// mode with the plan recorded and YOLO on, every round.
func TestChatSettingsWritersRace(t *testing.T) {
	e := newAPIEnv(t, withGate)
	for round := range settingsRaceRounds {
		th := e.waiting(scripted.ToolCall{ID: "plan", Name: "submit_plan", Args: `{}`})
		if code, body := e.post("/t/"+th+"/mode", `{"mode":"plan"}`); code != 204 {
			t.Fatalf("round %d: mode: %d %s", round, code, body)
		}
		call := e.callIDOf(th, "plan")
		e.model.Push(scripted.Reply{Text: "Building."})
		var wg sync.WaitGroup
		var yolo [3]int
		var answer int
		var answerBody string
		wg.Go(func() {
			for i := range yolo {
				yolo[i], _ = e.post("/t/"+th+"/yolo", `{"on":true}`)
			}
		})
		wg.Go(func() {
			answer, answerBody = e.post("/t/"+th+"/answer/"+call, `{"answer":{"action":"approved"}}`)
		})
		wg.Wait()
		if answer != 200 || strings.Contains(answerBody, "Not answered") {
			t.Fatalf("round %d: approve: %d %s", round, answer, answerBody)
		}
		for i, code := range yolo {
			if code != 204 {
				t.Fatalf("round %d: YOLO write %d: %d", round, i, code)
			}
		}
		waitThread(t, e, th)
		got, err := e.rt.GetThread(t.Context(), th)
		if err != nil {
			t.Fatal(err)
		}
		plans, _ := got.Metadata["plans"].([]any)
		if got.Metadata["yolo"] != true || got.Metadata["mode"] != "build" || len(plans) != 1 {
			t.Fatalf("round %d: a write was lost: yolo=%v mode=%v plans=%v", round, got.Metadata["yolo"], got.Metadata["mode"], got.Metadata["plans"])
		}
	}
}
