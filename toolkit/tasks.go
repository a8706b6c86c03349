package toolkit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"parley/agentcore"
)

// The task tools (Mastra's task_write, task_update, task_complete and
// task_check, spec §1.3) keep a structured task list per thread. The list
// is stored through an agentcore.StateStore under TaskStateType and is the
// source of truth: TaskStateProcessor shows it to the model, and the tools
// read and rewrite it on every call.
//
// Like Mastra's, these tools never fail with a Go error (except task_update
// given nothing to change, which Mastra rejects in its input schema): every
// outcome, including a store failure, is a result object {content, tasks,
// isError} of which the model sees content, as an error when isError.

// TaskStateType is the StateStore type the task list is kept under, as a
// JSON array of Task (Mastra's TASK_STATE_TYPE).
const TaskStateType = "task"

// Task statuses. At most one task is in progress at a time.
const (
	TaskPending    = "pending"
	TaskInProgress = "in_progress"
	TaskCompleted  = "completed"
)

// taskSlugMaxLen bounds generated ids (Mastra's TASK_ID_SLUG_MAX_LENGTH):
// long enough to tell tasks apart, short enough for the model to repeat.
const taskSlugMaxLen = 48

// Task is one entry of a thread's task list.
type Task struct {
	ID         string `json:"id"`
	Content    string `json:"content" desc:"What to do, imperative"`
	Status     string `json:"status" enum:"pending,in_progress,completed"`
	ActiveForm string `json:"activeForm" desc:"What is being done, present continuous"`
}

// TaskResult is what task_write, task_update and task_complete return.
// Tasks is the list after the call (on error: the unchanged list, or none
// when it could not be read).
type TaskResult struct {
	Content string `json:"content"`
	Tasks   []Task `json:"tasks"`
	IsError bool   `json:"isError"`
}

// TaskCheckResult is what task_check returns.
type TaskCheckResult struct {
	Content string      `json:"content"`
	Tasks   []Task      `json:"tasks"`
	Summary TaskSummary `json:"summary"`
	// IncompleteTasks lists the task in progress first, then the pending ones.
	IncompleteTasks []Task `json:"incompleteTasks"`
	IsError         bool   `json:"isError"`
}

// TaskSummary counts a task list.
type TaskSummary struct {
	Total      int  `json:"total"`
	Completed  int  `json:"completed"`
	InProgress int  `json:"inProgress"`
	Pending    int  `json:"pending"`
	Incomplete int  `json:"incomplete"`
	HasTasks   bool `json:"hasTasks"`
	// AllCompleted is false for an empty list: nothing tracked is not
	// "everything done".
	AllCompleted bool `json:"allCompleted"`
}

// TaskNotifier learns a thread's new task list after every successful
// change, e.g. to update the task panel. It runs inside the tool call, so
// it should hand the list off (publish it) rather than do slow work.
type TaskNotifier func(threadID string, tasks []Task)

// Model-facing texts, exactly as Mastra's.
const (
	taskNoMemory = "Task tools require agent memory (a memory-backed thread). No task was recorded. Configure the agent with Memory to use the task list."
	// taskNoFieldToUpdate is Mastra's input-schema refinement of task_update.
	taskNoFieldToUpdate  = "Provide at least one field to update."
	taskOneInProgress    = "Only one task can be in_progress at a time."
	taskNoTasksTracked   = "No tasks are currently tracked."
	taskCheckNoTasks     = "No tasks found. Consider using task_write to create a task list for complex work."
	taskCheckKeepWorking = "\n\nContinue working on these tasks before ending."
)

// Tool descriptions, exactly as Mastra's.
const (
	taskWriteDescription = `Create and manage a structured task list for your current coding session. This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.

Usage:
- Use this to create the initial task list or replace the whole list after replanning
- Pass the FULL task list each time this tool is called (replaces the previous list)
- Each task has: id (stable identifier), content (imperative), status (pending, in_progress, or completed), activeForm (present continuous)
- IDs must be unique. If duplicate explicit IDs are provided, the duplicate task is returned with a generated fallback ID
- Keep task IDs stable across updates. If omitted, IDs are generated and returned in the tool result
- When an ID is omitted while rewriting an existing list, one unambiguous matching task may reuse an existing ID
- Prefer single-task update tools when they are available
- Mark tasks in_progress BEFORE starting work (only ONE at a time)
- Mark tasks completed IMMEDIATELY after finishing
- Use this for multi-step tasks requiring 3+ distinct actions

States:
- pending: Not yet started
- in_progress: Currently working on (limit to ONE)
- completed: Finished successfully`
	taskUpdateDescription = `Update one task in the current task list by stable ID. Use this for targeted changes to one existing task.

Usage:
- Provide the task ID returned by the task-list tools
- Include only the fields that changed
- Use status to move a task between pending, in_progress, and completed
- Use task_complete when only marking a task completed
- If the ID is unknown, the tool returns an error with available task IDs`
	taskCompleteDescription = `Mark one task completed by stable ID. Use this when one tracked task is finished.

Usage:
- Provide the task ID returned by the task-list tools
- If the ID is unknown, the tool returns an error with available task IDs`
	taskCheckDescription = `Check the completion status of your current task list. Use this before finishing tracked work to ensure all tasks are completed.

Returns:
- Human-readable content summary with task counts and incomplete task IDs
- Structured task list snapshot with stable IDs
- summary object with total, completed, inProgress, pending, incomplete, hasTasks, and allCompleted
- incompleteTasks array for tasks that still need work

summary.allCompleted is true only when at least one tracked task exists and every tracked task is completed. If no tasks exist, summary.hasTasks is false and summary.allCompleted is false.`
)

// Input schemas, written out because they need minLength and field
// descriptions that SchemaOf does not derive; they mirror Mastra's zod.
const (
	taskIDSchema         = `{"type":"string","minLength":1,"description":"Stable task identifier (for example, 'task_investigate_tests'). Keep this unchanged across updates."}`
	taskStatusEnum       = `"enum":["pending","in_progress","completed"]`
	taskWriteInputSchema = `{"type":"object","properties":{"tasks":{"type":"array","description":"The complete updated task list","items":{"type":"object","properties":{` +
		`"id":` + taskIDSchema + `,` +
		`"content":{"type":"string","minLength":1,"description":"Task description in imperative form (e.g., 'Fix authentication bug')"},` +
		`"status":{"type":"string",` + taskStatusEnum + `,"description":"Current task status"},` +
		`"activeForm":{"type":"string","minLength":1,"description":"Present continuous form shown during execution (e.g., 'Fixing authentication bug')"}` +
		`},"required":["content","status","activeForm"],"additionalProperties":false}}},"required":["tasks"],"additionalProperties":false}`
	// At least one optional field is required too: Mastra's zod refine, so
	// not in the schema the model reads (refineTaskUpdate).
	taskUpdateInputSchema = `{"type":"object","properties":{` +
		`"id":` + taskIDSchema + `,` +
		`"content":{"type":"string","minLength":1,"description":"New task description in imperative form"},` +
		`"status":{"type":"string",` + taskStatusEnum + `,"description":"New task status"},` +
		`"activeForm":{"type":"string","minLength":1,"description":"New present continuous form shown during execution"}` +
		`},"required":["id"],"additionalProperties":false}`
	taskCompleteInputSchema = `{"type":"object","properties":{"id":` + taskIDSchema + `},"required":["id"],"additionalProperties":false}`
	taskCheckInputSchema    = `{"type":"object","properties":{},"additionalProperties":false}`
)

// TaskTools returns the task tools keyed by their Mastra names: task_write,
// task_update, task_complete and task_check, all keeping the list in store.
// Every notifier is told of each successful change. Without a store, or
// on a run without a thread and resource, the tools record nothing and say
// so to the model.
func TaskTools(store agentcore.StateStore, notify ...TaskNotifier) map[string]*agentcore.Tool {
	tt := &taskTools{store: store, notify: notify}
	tools := map[string]*agentcore.Tool{
		"task_write": {
			ID: "task_write", Description: taskWriteDescription,
			InputSchema: json.RawMessage(taskWriteInputSchema), Execute: tt.write,
		},
		"task_update": {
			ID: "task_update", Description: taskUpdateDescription,
			InputSchema: json.RawMessage(taskUpdateInputSchema), Execute: tt.update,
			Refine: refineTaskUpdate,
		},
		"task_complete": {
			ID: "task_complete", Description: taskCompleteDescription,
			InputSchema: json.RawMessage(taskCompleteInputSchema), Execute: tt.complete,
		},
		"task_check": {
			ID: "task_check", Description: taskCheckDescription,
			InputSchema: json.RawMessage(taskCheckInputSchema), Execute: tt.check,
		},
	}
	for name, t := range tools {
		if name == "task_check" {
			t.OutputSchema = agentcore.SchemaOf[TaskCheckResult]()
		} else {
			t.OutputSchema = agentcore.SchemaOf[TaskResult]()
		}
		t.ToModelOutput = taskModelOutput
	}
	return tools
}

// LoadTasks returns the thread's task list; empty (not nil) when none is
// stored.
func LoadTasks(ctx context.Context, store agentcore.StateStore, threadID string) ([]Task, error) {
	raw, ok, err := store.GetState(ctx, threadID, TaskStateType)
	if err != nil {
		return nil, err
	}
	tasks := []Task{}
	if ok {
		if err := json.Unmarshal(raw, &tasks); err != nil {
			return nil, fmt.Errorf("decode task list of thread %s: %w", threadID, err)
		}
	}
	if tasks == nil { // stored as null
		tasks = []Task{}
	}
	return tasks, nil
}

type taskTools struct {
	store  agentcore.StateStore
	notify []TaskNotifier
	// mu serialises read-modify-write of task lists: the tool calls of one
	// step run concurrently, and two of them changing the list at once would
	// otherwise lose one change.
	mu sync.Mutex
}

// taskInput is one task as task_write receives it; ID may be empty.
type taskInput struct {
	ID         string `json:"id"`
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"activeForm"`
}

func (tt *taskTools) write(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
	var in struct {
		Tasks []taskInput `json:"tasks"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("decode input: %w", err)
	}
	return tt.mutate(ctx, tc, "Failed to update tasks", func(current []Task) TaskResult {
		tasks := assignTaskIDs(in.Tasks, current)
		if countStatus(tasks, TaskInProgress) > 1 {
			return TaskResult{Content: taskOneInProgress, Tasks: current, IsError: true}
		}
		return TaskResult{Content: formatTaskListResult(tasks), Tasks: tasks}
	}), nil
}

func (tt *taskTools) update(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
	var in struct {
		ID         string  `json:"id"`
		Content    *string `json:"content"`
		Status     *string `json:"status"`
		ActiveForm *string `json:"activeForm"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("decode input: %w", err)
	}
	if in.Content == nil && in.Status == nil && in.ActiveForm == nil {
		return nil, errors.New(taskNoFieldToUpdate)
	}
	return tt.mutate(ctx, tc, "Failed to update task", func(current []Task) TaskResult {
		i := slices.IndexFunc(current, func(t Task) bool { return t.ID == in.ID })
		if i < 0 {
			return taskNotFound(in.ID, current)
		}
		tasks := slices.Clone(current)
		if in.Content != nil {
			tasks[i].Content = *in.Content
		}
		if in.Status != nil {
			tasks[i].Status = *in.Status
		}
		if in.ActiveForm != nil {
			tasks[i].ActiveForm = *in.ActiveForm
		}
		tasks = demoteExtraInProgress(tasks, i)
		return TaskResult{Content: formatTaskListResult(tasks), Tasks: tasks}
	}), nil
}

func (tt *taskTools) complete(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
	var in struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("decode input: %w", err)
	}
	return tt.mutate(ctx, tc, "Failed to complete task", func(current []Task) TaskResult {
		i := slices.IndexFunc(current, func(t Task) bool { return t.ID == in.ID })
		if i < 0 {
			return taskNotFound(in.ID, current)
		}
		// Unlike task_update, no demotion: completing cannot add an
		// in-progress task.
		tasks := slices.Clone(current)
		tasks[i].Status = TaskCompleted
		return TaskResult{Content: formatTaskListResult(tasks), Tasks: tasks}
	}), nil
}

func (tt *taskTools) check(ctx context.Context, _ json.RawMessage, tc *agentcore.ToolContext) (any, error) {
	failed := func(content string) TaskCheckResult {
		summary, _, _ := summarizeTasks(nil)
		return TaskCheckResult{Content: content, Tasks: []Task{}, Summary: summary, IncompleteTasks: []Task{}, IsError: true}
	}
	if !tt.memoryBacked(tc) {
		return failed(taskNoMemory), nil
	}
	tasks, err := LoadTasks(ctx, tt.store, tc.ThreadID)
	if err != nil {
		return failed("Failed to check tasks: " + err.Error()), nil
	}
	summary, inProgress, pending := summarizeTasks(tasks)
	return TaskCheckResult{
		Content:         formatTaskCheckResult(summary, inProgress, pending),
		Tasks:           tasks,
		Summary:         summary,
		IncompleteTasks: append(inProgress, pending...),
	}, nil
}

// memoryBacked reports whether the call can keep a task list: Mastra
// requires a thread and a resource (a memory-backed run) and a store.
func (tt *taskTools) memoryBacked(tc *agentcore.ToolContext) bool {
	return tt.store != nil && tc != nil && tc.ThreadID != "" && tc.ResourceID != ""
}

// mutate reads the thread's list, applies change and, unless the change is
// an error, stores the result and tells the notifiers. Store failures
// become results whose content starts with failure.
func (tt *taskTools) mutate(ctx context.Context, tc *agentcore.ToolContext, failure string, change func([]Task) TaskResult) TaskResult {
	if !tt.memoryBacked(tc) {
		return TaskResult{Content: taskNoMemory, Tasks: []Task{}, IsError: true}
	}
	failed := func(err error) TaskResult {
		return TaskResult{Content: failure + ": " + err.Error(), Tasks: []Task{}, IsError: true}
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	current, err := LoadTasks(ctx, tt.store, tc.ThreadID)
	if err != nil {
		return failed(err)
	}
	res := change(current)
	if res.IsError {
		return res
	}
	b, err := json.Marshal(res.Tasks)
	if err != nil {
		return failed(err)
	}
	if err := tt.store.SetState(ctx, tc.ThreadID, TaskStateType, b); err != nil {
		return failed(err)
	}
	for _, n := range tt.notify {
		n(tc.ThreadID, slices.Clone(res.Tasks))
	}
	return res
}

// taskModelOutput shows the model the whole result as JSON, as Mastra
// does: content, the tasks with their ids, isError (and task_check's
// summary and incompleteTasks, which its description tells the model to
// read).
func taskModelOutput(output any) agentcore.ModelOutput {
	failed := false
	switch o := output.(type) {
	case TaskResult:
		failed = o.IsError
	case TaskCheckResult:
		failed = o.IsError
	}
	if failed { // the same JSON; the card shows the call failed
		return agentcore.ModelOutput{Type: "error-json", Value: output}
	}
	return agentcore.ModelOutput{Type: "json", Value: output}
}

// refineTaskUpdate is Mastra's refinement of task_update's input: a change
// needs at least one field to change.
func refineTaskUpdate(input json.RawMessage) string {
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, f := range []string{"content", "status", "activeForm"} {
		if _, ok := in[f]; ok {
			return ""
		}
	}
	return taskNoFieldToUpdate
}

// assignTaskIDs gives every task of a task_write an id (Mastra's
// assignTaskIds), keeping ids stable across rewrites:
//  1. an explicit id is kept unless an earlier task of this write took it;
//  2. a task without an id whose content is unique among the id-less tasks
//     and matches exactly one previous task, whose id no task claims
//     explicitly, gets that task's id;
//  3. anything else gets task_<slug of content>, with _<n> for the n-th task
//     of the same content, made unique against the ids in use or reserved
//     (explicit and reused ones) by appending _2, _3, …
//
// Parley's one departure: an explicit id that is not agentcore.ValidID
// (quotes, markup, spaces, over 128 characters) counts as no id, so it is
// re-issued by 2 or 3. Task ids reach the page; the model reads the ids
// given in the result and uses those.
func assignTaskIDs(tasks []taskInput, previous []Task) []Task {
	tasks = slices.Clone(tasks)
	for i := range tasks {
		if tasks[i].ID != "" && !agentcore.ValidID(tasks[i].ID) {
			tasks[i].ID = ""
		}
	}
	explicit := map[string]bool{}
	omitted := map[string]int{} // id-less tasks per content
	for _, t := range tasks {
		if t.ID != "" {
			explicit[t.ID] = true
		} else {
			omitted[t.Content]++
		}
	}
	reuse := map[int]string{} // task index → previous id
	for i, t := range tasks {
		if t.ID != "" || omitted[t.Content] != 1 {
			continue
		}
		var match string
		n := 0
		for _, p := range previous {
			if p.Content == t.Content && !explicit[p.ID] && agentcore.ValidID(p.ID) {
				match, n = p.ID, n+1
			}
		}
		if n == 1 {
			reuse[i] = match
		}
	}
	reserved := maps.Clone(explicit)
	for _, id := range reuse {
		reserved[id] = true
	}

	used := map[string]bool{}
	occurrence := map[string]int{} // tasks so far per content, id or not
	out := make([]Task, len(tasks))
	for i, t := range tasks {
		occurrence[t.Content]++
		var id string
		switch {
		case t.ID != "" && !used[t.ID]:
			id = t.ID
		case reuse[i] != "" && !used[reuse[i]]:
			id = reuse[i]
		default:
			id = uniqueTaskID(fallbackTaskID(t.Content, occurrence[t.Content]), used, reserved)
		}
		used[id] = true
		out[i] = Task{ID: id, Content: t.Content, Status: t.Status, ActiveForm: t.ActiveForm}
	}
	return out
}

// fallbackTaskID is task_<slug>, or task_<slug>_<n> for the n-th task (n>1)
// with the same content in one write.
func fallbackTaskID(content string, occurrence int) string {
	id := "task_" + cmp.Or(slugifyTask(content), "item")
	if occurrence > 1 {
		id += "_" + strconv.Itoa(occurrence)
	}
	return id
}

// uniqueTaskID is id, or the first of id_2, id_3, … neither used nor
// reserved.
func uniqueTaskID(id string, used, reserved map[string]bool) string {
	taken := func(s string) bool { return used[s] || reserved[s] }
	if !taken(id) {
		return id
	}
	for n := 2; ; n++ {
		if next := id + "_" + strconv.Itoa(n); !taken(next) {
			return next
		}
	}
}

// slugifyTask keeps the ASCII letters and digits of the lowercased content,
// joining the runs of everything else between them into one "_", up to
// taskSlugMaxLen characters.
func slugifyTask(content string) string {
	var b strings.Builder
	pending := false // a separator is owed before the next kept character
	for _, r := range content {
		lower, sepAfter := unicode.ToLower(r), false
		if r == 'İ' {
			// JavaScript lowercases İ to "i" plus a combining dot, which
			// Mastra then reads as a separator; unicode.ToLower gives "i".
			lower, sepAfter = 'i', true
		}
		if ('a' <= lower && lower <= 'z') || ('0' <= lower && lower <= '9') {
			if pending && b.Len() > 0 && b.Len() < taskSlugMaxLen {
				b.WriteByte('_')
			}
			if b.Len() >= taskSlugMaxLen {
				break
			}
			b.WriteRune(lower)
			pending = sepAfter
			continue
		}
		pending = b.Len() > 0
	}
	// As Mastra's slugger does, a separator may take the last place: it is
	// written at length 47 before the cap stops the slug at 48, and kept
	// (the package wins over the spec's "no trailing _": see the spec's
	// "Corrections from running the real @mastra/core").
	return b.String()
}

func countStatus(tasks []Task, status string) int {
	n := 0
	for _, t := range tasks {
		if t.Status == status {
			n++
		}
	}
	return n
}

// demoteExtraInProgress makes every in-progress task but one pending: the
// task at preferred if it is in progress, else the last in progress.
// preferred < 0 prefers none.
func demoteExtraInProgress(tasks []Task, preferred int) []Task {
	keep, n := -1, 0
	for i, t := range tasks {
		if t.Status == TaskInProgress {
			keep, n = i, n+1
		}
	}
	if n <= 1 {
		return tasks
	}
	if preferred >= 0 && preferred < len(tasks) && tasks[preferred].Status == TaskInProgress {
		keep = preferred
	}
	out := slices.Clone(tasks)
	for i := range out {
		if out[i].Status == TaskInProgress && i != keep {
			out[i].Status = TaskPending
		}
	}
	return out
}

// formatTaskListResult is what the model reads after a change.
func formatTaskListResult(tasks []Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tasks updated: [%d/%d completed]", countStatus(tasks, TaskCompleted), len(tasks))
	if i := slices.IndexFunc(tasks, func(t Task) bool { return t.Status == TaskInProgress }); i >= 0 {
		fmt.Fprintf(&b, "\nCurrently: %s (%s)", tasks[i].ActiveForm, tasks[i].ID)
	}
	if len(tasks) > 0 {
		b.WriteString("\nTask IDs:\n")
		b.WriteString(taskIDLines(tasks))
	}
	return b.String()
}

// taskIDLines lists "- <id>: <content> (<status>)", one task a line.
func taskIDLines(tasks []Task) string {
	lines := make([]string, len(tasks))
	for i, t := range tasks {
		lines[i] = fmt.Sprintf("- %s: %s (%s)", t.ID, t.Content, t.Status)
	}
	return strings.Join(lines, "\n")
}

// taskNotFound answers an unknown id with the ids the model can use.
func taskNotFound(id string, tasks []Task) TaskResult {
	available := taskNoTasksTracked
	if len(tasks) > 0 {
		available = "Available task IDs:\n" + taskIDLines(tasks)
	}
	return TaskResult{Content: "Task not found: " + id + "\n\n" + available, Tasks: tasks, IsError: true}
}

// summarizeTasks counts tasks and returns the in-progress and pending ones
// (never nil, so they encode as []).
func summarizeTasks(tasks []Task) (s TaskSummary, inProgress, pending []Task) {
	inProgress, pending = []Task{}, []Task{}
	for _, t := range tasks {
		switch t.Status {
		case TaskCompleted:
			s.Completed++
		case TaskInProgress:
			inProgress = append(inProgress, t)
		case TaskPending:
			pending = append(pending, t)
		}
	}
	s.Total = len(tasks)
	s.InProgress, s.Pending = len(inProgress), len(pending)
	s.Incomplete = s.InProgress + s.Pending
	s.HasTasks = s.Total > 0
	s.AllCompleted = s.Total > 0 && s.Incomplete == 0
	return s, inProgress, pending
}

// formatTaskCheckResult is what task_check tells the model.
func formatTaskCheckResult(s TaskSummary, inProgress, pending []Task) string {
	if !s.HasTasks {
		return taskCheckNoTasks
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task Status: [%d/%d completed]\n- Completed: %d\n- In Progress: %d\n- Pending: %d\n\nAll tasks completed: ",
		s.Completed, s.Total, s.Completed, s.InProgress, s.Pending)
	if s.AllCompleted {
		b.WriteString("YES")
		return b.String()
	}
	b.WriteString("NO\n\nIncomplete tasks:")
	for _, section := range []struct {
		title string
		tasks []Task
	}{{"In Progress", inProgress}, {"Pending", pending}} {
		if len(section.tasks) == 0 {
			continue
		}
		b.WriteString("\n\n" + section.title + ":")
		for _, t := range section.tasks {
			fmt.Fprintf(&b, "\n- %s: %s", t.ID, t.Content)
		}
	}
	b.WriteString(taskCheckKeepWorking)
	return b.String()
}
