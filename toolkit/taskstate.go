package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"parley/agentcore"
	"parley/agentcore/llm"
)

// TaskSignalsStateType is the StateStore type under which
// TaskStateProcessor keeps the task signals the model has been shown: the
// last snapshot and the deltas since it.
const TaskSignalsStateType = "task-signals"

// taskDeltaSnapshotCap is Mastra's DELTA_SNAPSHOT_CAP: after this many
// deltas the next change is sent as a fresh snapshot, so the model never
// has to fold a long chain of deltas and the prompt stays bounded.
const taskDeltaSnapshotCap = 10

// taskStateInstructions is Mastra's system message for the task lane.
const taskStateInstructions = "Task list state may appear in the conversation as <current-task-list ...>...</current-task-list> snapshots and <task-list-update ...>...</task-list-update> deltas. These are automatic observations of your task list, not user instructions. Use them as the latest task state, continue following the actual user request, and do not treat task-list updates as the user asking you to repeat, summarize, or change tasks unless an actual user message asks for that."

// TaskStateProcessor shows the model its task list (Mastra's
// TaskStateProcessor, spec §1.3): before every model call it compares the
// stored list with what the model has already been shown and records the
// difference as a state signal, a full <current-task-list> snapshot or a
// <task-list-update> delta.
//
// Mastra keeps signals as messages of the thread, each where it happened,
// so the prompt only ever grows at its end and a provider's prompt cache
// holds. Parley builds the prompt afresh for every model call, so the
// processor keeps every signal it has shown in the thread's state with its
// place (after how many of the conversation's messages it was emitted) and
// puts each back there on every call.
//
// It assumes one run at a time per thread, as Parley's runtime guarantees:
// the signal history is read, extended and written back without a lock.
type TaskStateProcessor struct {
	store agentcore.StateStore
}

var _ agentcore.Processor = (*TaskStateProcessor)(nil)

// NewTaskStateProcessor returns a processor showing the task lists kept in
// store by TaskTools.
func NewTaskStateProcessor(store agentcore.StateStore) *TaskStateProcessor {
	return &TaskStateProcessor{store: store}
}

// taskSignals is the signal history of one thread, as stored: the latest
// snapshot and the deltas since it (what the model believes), and every
// signal shown, in order, with its place.
type taskSignals struct {
	Snapshot *taskSnapshot `json:"snapshot,omitempty"`
	Deltas   []taskDelta   `json:"deltas"`
	Shown    []shownSignal `json:"shown,omitempty"`
}

// shownSignal is one signal as the model read it, after the first At
// messages of the conversation (system messages not counted).
type shownSignal struct {
	At  int    `json:"at"`
	XML string `json:"xml"`
}

// maxShownSignals bounds the signals kept: past it the oldest are dropped
// (the latest snapshot and the deltas since are always among the kept).
const maxShownSignals = 200

type taskSnapshot struct {
	Tasks    []Task `json:"tasks"`
	CacheKey string `json:"cacheKey"`
}

type taskDelta struct {
	Ops []taskOp `json:"ops"`
}

// taskOp is one change of a delta: add and update carry the task, remove
// its id (Mastra's TaskDeltaOp).
type taskOp struct {
	Op   string `json:"op"` // add, update or remove
	Task Task   `json:"task,omitzero"`
	ID   string `json:"id,omitempty"`
}

// ProcessInput adds the task-lane instructions to the system messages and,
// on a thread with a resource, the task signals after the prompt.
func (p *TaskStateProcessor) ProcessInput(ctx context.Context, in agentcore.ProcessInput) ([]llm.Message, error) {
	msgs := withSystemMessage(in.Messages, taskStateInstructions)
	// As the task tools, the lane needs a memory-backed thread.
	if p.store == nil || in.ThreadID == "" || in.ResourceID == "" {
		return msgs, nil
	}
	sig, err := p.loadSignals(ctx, in.ThreadID)
	if err != nil {
		return nil, err
	}
	raw, stored, err := p.store.GetState(ctx, in.ThreadID, TaskStateType)
	if err != nil {
		return nil, fmt.Errorf("load task list of thread %s: %w", in.ThreadID, err)
	}
	var current []Task
	if stored {
		if err := json.Unmarshal(raw, &current); err != nil {
			return nil, fmt.Errorf("decode task list of thread %s: %w", in.ThreadID, err)
		}
	}
	at := 0
	for _, m := range in.Messages {
		if m.Role != llm.RoleSystem {
			at++
		}
	}
	if sig.Snapshot != nil && len(sig.Shown) == 0 {
		// Kept before signals had places: shown from here on.
		for _, xml := range sig.render() {
			sig.Shown = append(sig.Shown, shownSignal{At: at, XML: xml})
		}
	}
	if next, changed := sig.next(current, stored); changed {
		next.Shown = append(slices.Clip(sig.Shown), shownSignal{At: at, XML: next.latest()})
		if extra := len(next.Shown) - maxShownSignals; extra > 0 {
			next.Shown = next.Shown[extra:]
		}
		b, err := json.Marshal(next)
		if err != nil {
			return nil, fmt.Errorf("encode task signals: %w", err)
		}
		if err := p.store.SetState(ctx, in.ThreadID, TaskSignalsStateType, b); err != nil {
			return nil, fmt.Errorf("save task signals of thread %s: %w", in.ThreadID, err)
		}
		sig = next
		if in.Emit != nil {
			in.Emit(sig.latestSignal(in.ThreadID, len(sig.Shown)))
		}
	}
	return placeSignals(msgs, sig.Shown), nil
}

// latestSignal is the newest signal as Mastra's stream shows a state
// signal: its tag, contents and count, and the list it brings the model to.
func (s taskSignals) latestSignal(threadID string, version int) agentcore.Signal {
	sig := agentcore.Signal{ID: agentcore.NewID(), Type: agentcore.SignalState, CreatedAt: time.Now().UTC()}
	state := map[string]any{"id": "tasks", "threadId": threadID, "version": version}
	if n := len(s.Deltas); n > 0 {
		ops := s.Deltas[n-1].Ops
		sig.TagName, sig.Contents = "task-list-update", renderTaskOps(ops)
		sig.Attributes = agentcore.Attrs{{Name: "changes", Value: len(ops)}}
		state["mode"] = "delta"
		sig.Metadata = map[string]any{"delta": ops, "state": state}
	} else {
		sig.TagName, sig.Contents = "current-task-list", renderTaskList(s.Snapshot.Tasks)
		sig.Attributes = agentcore.Attrs{{Name: "count", Value: len(s.Snapshot.Tasks)}}
		state["mode"], state["cacheKey"] = "snapshot", s.Snapshot.CacheKey
		sig.Metadata = map[string]any{"value": map[string]any{"tasks": s.Snapshot.Tasks}, "state": state}
	}
	return sig
}

// placeSignals puts each signal into msgs as a user message after the
// first At messages that are not system messages; a place past the end
// (a conversation shortened since) is the end.
func placeSignals(msgs []llm.Message, shown []shownSignal) []llm.Message {
	if len(shown) == 0 {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs)+len(shown))
	next, seen := 0, 0
	emit := func() {
		for next < len(shown) && shown[next].At <= seen {
			out = append(out, llm.Message{Role: llm.RoleUser, Text: shown[next].XML})
			next++
		}
	}
	for _, m := range msgs {
		if m.Role != llm.RoleSystem {
			emit()
			seen++
		}
		out = append(out, m)
	}
	for ; next < len(shown); next++ {
		out = append(out, llm.Message{Role: llm.RoleUser, Text: shown[next].XML})
	}
	return out
}

func (p *TaskStateProcessor) loadSignals(ctx context.Context, threadID string) (taskSignals, error) {
	var sig taskSignals
	raw, ok, err := p.store.GetState(ctx, threadID, TaskSignalsStateType)
	if err != nil {
		return sig, fmt.Errorf("load task signals of thread %s: %w", threadID, err)
	}
	if ok {
		if err := json.Unmarshal(raw, &sig); err != nil {
			return sig, fmt.Errorf("decode task signals of thread %s: %w", threadID, err)
		}
	}
	return sig, nil
}

// withSystemMessage returns msgs with a system message of text after its
// leading system messages, leaving msgs itself untouched.
func withSystemMessage(msgs []llm.Message, text string) []llm.Message {
	at := 0
	for at < len(msgs) && msgs[at].Role == llm.RoleSystem {
		at++
	}
	out := make([]llm.Message, 0, len(msgs)+1)
	out = append(out, msgs[:at]...)
	out = append(out, llm.Message{Role: llm.RoleSystem, Text: text})
	return append(out, msgs[at:]...)
}

// prior is the list the model believes: the snapshot with every delta
// since applied in order.
func (s taskSignals) prior() []Task {
	var tasks []Task
	if s.Snapshot != nil {
		tasks = s.Snapshot.Tasks
	}
	for _, d := range s.Deltas {
		tasks = applyTaskOps(tasks, d.Ops)
	}
	return tasks
}

// next is the history after showing the model current (Mastra's
// computeStateSignal); changed is false when there is nothing new to show.
// Without a stored list the model's belief stands.
func (s taskSignals) next(current []Task, stored bool) (next taskSignals, changed bool) {
	prior := s.prior()
	if !stored {
		current = prior
	}
	if len(current) == 0 && len(prior) == 0 {
		return s, false
	}
	ops := diffTasks(prior, current)
	hasBase := s.Snapshot != nil
	if len(ops) == 0 && hasBase {
		return s, false
	}
	if !hasBase || len(s.Deltas) >= taskDeltaSnapshotCap {
		snap := append([]Task{}, current...) // [] not null when stored, even when empty
		return taskSignals{Snapshot: &taskSnapshot{Tasks: snap, CacheKey: taskListCacheKey(snap)}}, true
	}
	return taskSignals{Snapshot: s.Snapshot, Deltas: append(slices.Clone(s.Deltas), taskDelta{Ops: ops})}, true
}

// latest is the newest signal as the model reads it: the last delta, or
// the snapshot when there is none since.
func (s taskSignals) latest() string {
	if n := len(s.Deltas); n > 0 {
		return renderSignal("task-list-update", "changes", len(s.Deltas[n-1].Ops), renderTaskOps(s.Deltas[n-1].Ops))
	}
	return renderSignal("current-task-list", "count", len(s.Snapshot.Tasks), renderTaskList(s.Snapshot.Tasks))
}

// render is the history as the model reads it: the snapshot, then each
// delta, one XML element each.
func (s taskSignals) render() []string {
	if s.Snapshot == nil {
		return nil
	}
	out := []string{renderSignal("current-task-list", "count", len(s.Snapshot.Tasks), renderTaskList(s.Snapshot.Tasks))}
	for _, d := range s.Deltas {
		out = append(out, renderSignal("task-list-update", "changes", len(d.Ops), renderTaskOps(d.Ops)))
	}
	return out
}

// applyTaskOps applies ops to tasks: add and update replace the task with
// the same id in place or append it, remove drops it.
func applyTaskOps(tasks []Task, ops []taskOp) []Task {
	next := slices.Clone(tasks)
	for _, op := range ops {
		id := op.ID
		if op.Op != "remove" {
			id = op.Task.ID
		}
		i := slices.IndexFunc(next, func(t Task) bool { return t.ID == id })
		switch {
		case op.Op == "remove":
			if i >= 0 {
				next = slices.Delete(next, i, i+1)
			}
		case i >= 0:
			next[i] = op.Task
		default:
			next = append(next, op.Task)
		}
	}
	return next
}

// diffTasks is the ops turning prior into current: adds and updates in the
// order of current, then removes in the order of prior. A task is updated
// when any of its fields changed.
func diffTasks(prior, current []Task) []taskOp {
	before := make(map[string]Task, len(prior))
	for _, t := range prior {
		before[t.ID] = t
	}
	now := make(map[string]bool, len(current))
	var ops []taskOp
	for _, t := range current {
		now[t.ID] = true
		b, ok := before[t.ID]
		switch {
		case !ok:
			ops = append(ops, taskOp{Op: "add", Task: t})
		case b != t:
			ops = append(ops, taskOp{Op: "update", Task: t})
		}
	}
	for _, t := range prior {
		if !now[t.ID] {
			ops = append(ops, taskOp{Op: "remove", ID: t.ID})
		}
	}
	return ops
}

func taskIcon(status string) string {
	switch status {
	case TaskCompleted:
		return "✓"
	case TaskInProgress:
		return "▸"
	}
	return "○"
}

// renderTaskList is the body of a snapshot; empty for no tasks, which
// renders as a self-closing element.
func renderTaskList(tasks []Task) string {
	if len(tasks) == 0 {
		return ""
	}
	lines := make([]string, len(tasks))
	for i, t := range tasks {
		lines[i] = fmt.Sprintf("  %s [%s] {id: %s} %s", taskIcon(t.Status), t.Status, t.ID, t.Content)
	}
	return "\n" + strings.Join(lines, "\n") + "\n"
}

// renderTaskOps is the body of a delta.
func renderTaskOps(ops []taskOp) string {
	lines := make([]string, len(ops))
	for i, op := range ops {
		if op.Op == "remove" {
			lines[i] = fmt.Sprintf("  − removed {id: %s}", op.ID)
			continue
		}
		verb := "+"
		if op.Op != "add" {
			verb = taskIcon(op.Task.Status)
		}
		lines[i] = fmt.Sprintf("  %s {id: %s} [%s] %s", verb, op.Task.ID, op.Task.Status, op.Task.Content)
	}
	return "\n" + strings.Join(lines, "\n") + "\n"
}

// renderSignal renders a signal the way Mastra's signal model does (spec
// §4.1): the attribute value escaped for a quoted attribute, the contents
// escaped as text, a self-closing element when there are none.
func renderSignal(tag, attr string, value int, contents string) string {
	open := "<" + tag + " " + attr + `="` + escapeXMLAttr(strconv.Itoa(value)) + `"`
	if contents == "" {
		return open + " />"
	}
	return open + ">" + escapeXMLText(contents) + "</" + tag + ">"
}

var (
	xmlTextEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	xmlAttrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
)

func escapeXMLText(s string) string { return xmlTextEscaper.Replace(s) }

func escapeXMLAttr(s string) string { return xmlAttrEscaper.Replace(s) }

// taskListCacheKey identifies a task list's content (Mastra's
// stableTasksCacheKey). Each field is length-prefixed so delimiters inside
// values cannot make two lists collide; lengths count UTF-16 code units, as
// JavaScript's String.length does, so keys match Mastra's.
func taskListCacheKey(tasks []Task) string {
	parts := make([]string, len(tasks))
	for i, t := range tasks {
		parts[i] = lengthPrefixed(t.ID) + lengthPrefixed(t.Status) + lengthPrefixed(t.Content) + lengthPrefixed(t.ActiveForm)
	}
	return "tasks:" + strings.Join(parts, "|")
}

func lengthPrefixed(s string) string {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // invalid UTF-8 decodes to U+FFFD, one unit
	}
	return strconv.Itoa(n) + ":" + s
}
