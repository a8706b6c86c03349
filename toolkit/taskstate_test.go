package toolkit

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
)

var taskPrompt = []llm.Message{
	{Role: llm.RoleSystem, Text: "You are Parley."},
	{Role: llm.RoleSystem, Text: "Be brief."},
	{Role: llm.RoleUser, Text: "hi"},
}

// process runs the processor over taskPrompt and returns the task signals
// it appended, checking the rest of the prompt on the way.
func (e *taskEnv) process(t *testing.T, p *TaskStateProcessor) []string {
	t.Helper()
	in := agentcore.ProcessInput{ThreadID: e.tc.ThreadID, ResourceID: e.tc.ResourceID, Messages: taskPrompt}
	msgs, err := p.ProcessInput(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{taskPrompt[0], taskPrompt[1], {Role: llm.RoleSystem, Text: taskStateInstructions}, taskPrompt[2]}
	if len(msgs) < len(want) || !reflect.DeepEqual(msgs[:len(want)], want) {
		t.Fatalf("prompt = %+v\nwant it to start %+v", msgs, want)
	}
	var signals []string
	for _, m := range msgs[len(want):] {
		if m.Role != llm.RoleUser {
			t.Errorf("signal %+v is not a user message", m)
		}
		signals = append(signals, m.Text)
	}
	return signals
}

func (e *taskEnv) signals(t *testing.T) (taskSignals, bool) {
	t.Helper()
	raw, ok, err := e.db.GetState(context.Background(), e.tc.ThreadID, TaskSignalsStateType)
	if err != nil {
		t.Fatal(err)
	}
	var s taskSignals
	if ok {
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
	}
	return s, ok
}

func wantSignals(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("signals:\n%s\nwant:\n%s", strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n"))
	}
}

func TestTaskStateInstructions(t *testing.T) {
	if !strings.Contains(taskStateInstructions, "These are automatic observations of your task list, not user instructions.") {
		t.Errorf("instructions %q", taskStateInstructions)
	}
	// Without memory only the instructions are added, and the input is left alone.
	p := NewTaskStateProcessor(nil)
	in := []llm.Message{{Role: llm.RoleUser, Text: "hi"}}
	msgs, err := p.ProcessInput(context.Background(), agentcore.ProcessInput{ThreadID: "t", ResourceID: "r", Messages: in})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{{Role: llm.RoleSystem, Text: taskStateInstructions}, {Role: llm.RoleUser, Text: "hi"}}
	if !reflect.DeepEqual(msgs, want) || len(in) != 1 {
		t.Errorf("prompt = %+v, want %+v", msgs, want)
	}
}

func TestTaskStateNothingToShow(t *testing.T) {
	e := newTaskEnv(t)
	p := NewTaskStateProcessor(e.db)
	if got := e.process(t, p); len(got) != 0 {
		t.Errorf("no tasks: signals %q", got)
	}
	e.seed(t) // an empty stored list
	if got := e.process(t, p); len(got) != 0 {
		t.Errorf("empty list: signals %q", got)
	}
	if _, ok := e.signals(t); ok {
		t.Error("signal history stored with nothing shown")
	}
	// A run without a resource is not memory-backed.
	e.seed(t, task("a", "A", TaskPending))
	msgs, err := p.ProcessInput(context.Background(), agentcore.ProcessInput{ThreadID: e.tc.ThreadID, Messages: taskPrompt})
	if err != nil || len(msgs) != len(taskPrompt)+1 {
		t.Errorf("without resource: %d messages, %v; want only the instructions added", len(msgs), err)
	}
}

func TestTaskStateSnapshot(t *testing.T) {
	e := newTaskEnv(t)
	p := NewTaskStateProcessor(e.db)
	tasks := []Task{
		task("a", "Done & dusted", TaskCompleted),
		task("b", `Fix <b> in "q"`, TaskInProgress),
		task("c", "Ship", TaskPending),
	}
	e.seed(t, tasks...)
	snapshot := "<current-task-list count=\"3\">\n" +
		"  ✓ [completed] {id: a} Done &amp; dusted\n" +
		"  ▸ [in_progress] {id: b} Fix &lt;b&gt; in \"q\"\n" +
		"  ○ [pending] {id: c} Ship\n" +
		"</current-task-list>"
	wantSignals(t, e.process(t, p), snapshot)
	sig, _ := e.signals(t)
	if sig.Snapshot == nil || !reflect.DeepEqual(sig.Snapshot.Tasks, tasks) || sig.Snapshot.CacheKey != taskListCacheKey(tasks) || len(sig.Deltas) != 0 {
		t.Errorf("history = %+v, want the snapshot of %+v", sig, tasks)
	}
	// Nothing changed: nothing new, but the snapshot is sent again, since
	// every call builds its prompt afresh.
	wantSignals(t, e.process(t, p), snapshot)
	if again, _ := e.signals(t); !reflect.DeepEqual(again, sig) {
		t.Errorf("history changed to %+v without a change", again)
	}
}

func TestTaskStateDelta(t *testing.T) {
	e := newTaskEnv(t)
	p := NewTaskStateProcessor(e.db)
	e.seed(t, task("a", "A", TaskPending), task("b", "B", TaskPending), task("c", "C", TaskPending))
	snapshot := e.process(t, p)

	// d new, b changed, a unchanged, e new; c removed.
	e.seed(t, task("d", "D", TaskPending), Task{ID: "b", Content: "B", Status: TaskInProgress, ActiveForm: "Bing"},
		task("a", "A", TaskPending), task("e", "E <1>", TaskCompleted))
	delta := "<task-list-update changes=\"4\">\n" +
		"  + {id: d} [pending] D\n" +
		"  ▸ {id: b} [in_progress] B\n" +
		"  + {id: e} [completed] E &lt;1&gt;\n" +
		"  − removed {id: c}\n" +
		"</task-list-update>"
	wantSignals(t, e.process(t, p), snapshot[0], delta)
	wantSignals(t, e.process(t, p), snapshot[0], delta) // no change: both again

	// Changes through the tools show in the next call, as deltas after the first.
	e.result(t, "task_complete", `{"id":"b"}`)
	update := "<task-list-update changes=\"1\">\n  ✓ {id: b} [completed] B\n</task-list-update>"
	wantSignals(t, e.process(t, p), snapshot[0], delta, update)

	// The model's belief folds the deltas onto the snapshot: updates in
	// place, adds appended, removes dropped.
	sig, _ := e.signals(t)
	if got := sig.prior(); !reflect.DeepEqual(ids(got), []string{"a", "b", "d", "e"}) {
		t.Errorf("prior ids = %q; want the snapshot order with adds appended", ids(got))
	}
}

func TestTaskStateResnapshot(t *testing.T) {
	e := newTaskEnv(t)
	p := NewTaskStateProcessor(e.db)
	e.seed(t, task("a", "A", TaskPending))
	e.process(t, p)
	var before []string
	for i := range taskDeltaSnapshotCap {
		e.seed(t, task("a", "A", TaskPending), task("x", strings.Repeat("x", i+1), TaskPending))
		if before = e.process(t, p); len(before) != i+2 {
			t.Fatalf("change %d: %d signals, want the snapshot and %d deltas", i+1, len(before), i+1)
		}
	}
	// The eleventh change comes as a fresh snapshot (here, of an empty
	// list), after the signals already shown: the prompt only grows, as
	// Mastra's does with its signals kept as thread messages.
	e.seed(t)
	wantSignals(t, e.process(t, p), append(before, `<current-task-list count="0" />`)...)
	sig, _ := e.signals(t)
	if sig.Snapshot == nil || sig.Snapshot.CacheKey != "tasks:" || len(sig.Deltas) != 0 {
		t.Errorf("history = %+v, want an empty snapshot alone", sig)
	}
	raw, _, _ := e.db.GetState(context.Background(), e.tc.ThreadID, TaskSignalsStateType)
	if !strings.Contains(string(raw), `"tasks":[]`) {
		t.Errorf("stored history %s, want the empty snapshot's tasks as []", raw)
	}
	// Emptied and still empty: nothing new; the empty snapshot stays.
	wantSignals(t, e.process(t, p), append(before, `<current-task-list count="0" />`)...)
}

// Each signal stays where it was emitted, after the messages the model had
// then, so that every prompt is the previous one with more at its end.
func TestTaskStateSignalsStayWhereTheyHappened(t *testing.T) {
	e := newTaskEnv(t)
	p := NewTaskStateProcessor(e.db)
	prompt := slices.Clone(taskPrompt)
	call := func(extra ...llm.Message) []llm.Message {
		t.Helper()
		prompt = append(prompt, extra...)
		in := agentcore.ProcessInput{ThreadID: e.tc.ThreadID, ResourceID: e.tc.ResourceID, Messages: prompt}
		msgs, err := p.ProcessInput(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	first := call()
	e.seed(t, task("a", "A", TaskInProgress))
	second := call(llm.Message{Role: llm.RoleAssistant, Text: "writing tasks"}, llm.Message{Role: llm.RoleTool, Text: "written"})
	e.seed(t, task("a", "A", TaskCompleted))
	third := call(llm.Message{Role: llm.RoleAssistant, Text: "done"}, llm.Message{Role: llm.RoleUser, Text: "thanks"})
	for i, pair := range [][2][]llm.Message{{first, second}, {second, third}} {
		if !reflect.DeepEqual(pair[1][:len(pair[0])], pair[0]) {
			t.Fatalf("prompt %d is not a prefix of prompt %d:\n%+v\n%+v", i+1, i+2, pair[0], pair[1])
		}
	}
	var roles []string
	for _, m := range third {
		roles = append(roles, string(m.Role)+":"+strings.SplitN(m.Text, " ", 2)[0])
	}
	want := []string{"system:You", "system:Be", "system:Task", "user:hi", "assistant:writing", "tool:written",
		"user:<current-task-list", "assistant:done", "user:thanks", "user:<task-list-update"}
	if !reflect.DeepEqual(roles, want) {
		t.Errorf("prompt = %q\nwant     %q", roles, want)
	}
}

func TestTaskListCacheKey(t *testing.T) {
	tasks := []Task{
		{ID: "a", Status: TaskPending, Content: "𝄞 x|y", ActiveForm: "é"},
		{ID: "b:1", Status: TaskCompleted, Content: "", ActiveForm: "Doing"},
	}
	// 𝄞 is two UTF-16 units (four UTF-8 bytes), é one.
	want := "tasks:1:a7:pending6:𝄞 x|y1:é|3:b:19:completed0:5:Doing"
	if got := taskListCacheKey(tasks); got != want {
		t.Errorf("cacheKey = %q\nwant       %q", got, want)
	}
	if got := taskListCacheKey(nil); got != "tasks:" {
		t.Errorf("empty cacheKey = %q", got)
	}
}

func TestTaskSignalEscapes(t *testing.T) {
	if got := escapeXMLAttr(`a&<>"'`); got != `a&amp;&lt;&gt;&quot;'` {
		t.Errorf("attribute escape = %q", got)
	}
	if got := renderSignal("t", "n", 2, `x & "y"`); got != `<t n="2">x &amp; "y"</t>` {
		t.Errorf("renderSignal = %q", got)
	}
}
