package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

const planText = "# Dark mode\\n\\n1. Add a **dark** palette\\n2. Follow the OS setting\\n"

// planned switches a thread to Plan mode, and has the model write a plan
// and submit it.
func planned(t *testing.T, p *parley) (*rod.Page, string) {
	t.Helper()
	id := p.newThread()
	p.Model.Push(
		scripted.Reply{Text: "Writing the plan.", ToolCalls: []scripted.ToolCall{{ID: "w1", Name: "write_file",
			Args: `{"path":".parley/plans/dark-mode.md","content":"` + planText + `"}`}}},
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "p1", Name: "submit_plan", Args: `{"path":".parley/plans/dark-mode.md"}`}}},
	)
	pg := p.page("/t/" + id)
	pg.MustElement(`#mode-switch [data-mode=plan]`).MustClick()
	waitJS(t, pg, `() => document.querySelector('#mode-switch [data-mode=plan]').classList.contains('active')`)
	pg.MustElement("#draft").MustInput("plan dark mode")
	pg.Keyboard.MustType(input.Enter)
	p.callIn(id, "p1") // the plan submitted before, in another chat, had the same id
	waitJS(t, pg, `() => document.querySelector('`+p.sel("p1")+`[data-state="suspended"] [data-plan]') !== null`)
	return pg, id
}

// toolResultSeen is what the model was told about call id (of a built-in's
// JSON result, its content).
func toolResultSeen(p *parley, id string) string {
	reqs := p.Model.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return resultContent(m.Content)
		}
	}
	return ""
}

// resultContent is the content of a built-in's result, which the model
// reads as JSON ({"content": …, "isError": …}, as Mastra sends it); other
// results as they are.
func resultContent(s string) string {
	var r struct {
		Content *string `json:"content"`
	}
	if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &r) == nil && r.Content != nil {
		return *r.Content
	}
	return s
}

func TestPlanApprove(t *testing.T) {
	p := startParley(t)
	pg, _ := planned(t, p)
	// Plan mode offered the plan tools and the plan-mode rules.
	first := p.Model.Requests()[0]
	if !first.HasTool("submit_plan") || first.HasTool("nope") || !strings.Contains(string(first.Body), "You are in Plan mode") {
		t.Fatalf("plan mode request: tools %v", first.Tools)
	}
	plan := `document.querySelector('[data-plan]')`
	if got := evalString(pg, `() => `+plan+`.innerText`); !strings.Contains(got, "Dark mode") || !strings.Contains(got, "Follow the OS setting") {
		t.Fatalf("plan shown: %q", got)
	}
	if n := pg.MustEval(`() => ` + plan + `.querySelectorAll('strong').length`).Int(); n < 1 {
		t.Fatal("the plan's markdown is not rendered")
	}
	pg.MustScreenshot(artifact("plan-review.png"))
	p.Model.Push(scripted.Reply{Text: "Implementing the plan now."})
	pg.MustElement(".plan-approve").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Implementing the plan now.')`)
	if got := toolResultSeen(p, "p1"); got != "Plan approved. Proceed with implementation following the approved plan." {
		t.Fatalf("model told %q", got)
	}
	waitJS(t, pg, `() => document.querySelector('#mode-switch [data-mode=build]').classList.contains('active')`)
	waitJS(t, pg, `() => document.querySelector('.plans summary')?.innerText.includes('Approved plans (1)')`)
	waitJS(t, pg, `() => document.querySelector('[data-plan] .plan-decision')?.textContent === 'Approved'`)
	// The continued run was in Build mode: every tool, no Plan-mode rules.
	if last := p.Model.Requests()[len(p.Model.Requests())-1]; !last.HasTool("execute_command") || strings.Contains(string(last.Body), "You are in Plan mode") {
		t.Fatal("the approved run was still in Plan mode")
	}
}

func TestPlanRejectAndRequestChanges(t *testing.T) {
	p := startParley(t)
	pg, _ := planned(t, p)
	// Request changes: the plan stays visible while typing.
	pg.MustElement(".plan-changes textarea").MustInput("Use CSS variables")
	if !pg.MustElement(`[data-plan] .plan-body`).MustVisible() {
		t.Fatal("the plan is hidden while feedback is typed")
	}
	p.Model.Push(scripted.Reply{Text: "Revising."})
	pg.MustElement(".plan-request").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Revising.')`)
	want := "Plan was not approved. The user wants revisions.\n\nUser feedback: Use CSS variables\n\nPlease revise the plan based on the feedback and submit again with submit_plan."
	if got := toolResultSeen(p, "p1"); got != want {
		t.Fatalf("model told %q", got)
	}
	if !pg.MustElement(`#mode-switch [data-mode=plan]`).MustHas(".active") && !strings.Contains(pg.MustElement(`#mode-switch [data-mode=plan]`).MustProperty("className").String(), "active") {
		t.Fatal("a rejected plan left Plan mode")
	}

	pg, _ = planned(t, p)
	p.Model.Push(scripted.Reply{Text: "Waiting for your instructions."})
	pg.MustElement(".plan-reject").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Waiting for your instructions.')`)
	if got := toolResultSeen(p, "p1"); got != "Plan was not approved. The user will send revision instructions in their next message. Stop now and wait for the user to provide feedback before revising the plan." {
		t.Fatalf("model told %q", got)
	}
}

// Quit while a question and a plan wait; start again; answer both.
func TestRestartWithOpenQuestionAndPlan(t *testing.T) {
	p := startParley(t)
	_, id := planned(t, p)
	p = p.restart()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('`+p.sel("p1")+`[data-state="suspended"] .plan-approve') !== null`)
	p.Model.Push(scripted.Reply{Text: "Approved after restart."})
	pg.MustElement(".plan-approve").MustClick()
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]')?.innerText.includes('Approved after restart.')`)

	qpg, qid := ask(t, p, `{"question":"Which port?"}`)
	_ = qpg
	p = p.restart()
	qpg = p.page("/t/" + qid)
	waitJS(t, qpg, `() => document.querySelector('`+p.sel("q1")+`[data-state="suspended"] textarea') !== null`)
	qpg.MustElement(`[data-question] textarea`).MustInput("443")
	qpg.Keyboard.MustType(input.Enter)
	if got := answered(t, p, qpg); got != "User answered: 443" {
		t.Fatalf("after restart the model was told %q", got)
	}
}

// The task panel fills while task_write streams, shows the in-progress
// item's activeForm, survives a reload, and hides when all is done.
func TestTaskPanel(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	tasks := `{"tasks":[` +
		`{"content":"Read the code","status":"completed","activeForm":"Reading the code"},` +
		`{"content":"Write the fix","status":"in_progress","activeForm":"Writing the fix"},` +
		`{"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]}`
	p.Model.Push(
		scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "t1", Name: "task_write", Args: tasks}}, ChunkSize: 10, Delay: 40 * time.Millisecond},
		scripted.Reply{Text: "On it."},
	)
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("fix the bug")
	pg.Keyboard.MustType(input.Enter)
	// While the call is still being written, the panel already lists tasks.
	waitJS(t, pg, `() => !document.querySelector('#task-panel').hidden && document.querySelector('`+p.sel("t1")+`')?.dataset.state === 'input-streaming'`)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	head := evalString(pg, `() => document.querySelector('#task-panel .task-head').innerText`)
	if head != "Tasks [1/3 completed]" {
		t.Fatalf("panel head %q", head)
	}
	if got := evalString(pg, `() => document.querySelector('#task-panel [data-status=in_progress]').innerText`); !strings.Contains(got, "Writing the fix") {
		t.Fatalf("in-progress item shows %q", got)
	}
	pg.MustScreenshot(artifact("task-panel.png"))
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `() => document.querySelector('#task-panel .task-head')?.innerText === 'Tasks [1/3 completed]'`)

	done := strings.NewReplacer(`"in_progress"`, `"completed"`, `"pending"`, `"completed"`).Replace(tasks)
	p.Model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "t2", Name: "task_write", Args: done}}}, scripted.Reply{Text: "All done."})
	pg.MustElement("#draft").MustInput("finish")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant')].pop()?.innerText.includes('All done.')`)
	waitJS(t, pg, `() => document.querySelector('#task-panel').hidden`)
}
