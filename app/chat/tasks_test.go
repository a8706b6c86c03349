package chat_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"parley/agentcore"
	"parley/app/chat"
	"parley/storage"
	"parley/toolkit"
)

// everyField is a task list whose every field holds a value of its own, so
// a field read under another name (or not at all) shows.
func everyField() []chat.Task {
	var list []chat.Task
	for _, status := range []string{toolkit.TaskCompleted, toolkit.TaskInProgress, toolkit.TaskPending} {
		var t chat.Task
		v := reflect.ValueOf(&t).Elem()
		for i := range v.NumField() {
			if v.Field(i).Kind() != reflect.String {
				continue
			}
			v.Field(i).SetString(v.Type().Field(i).Name + " of " + status)
		}
		t.ID = "task_" + status
		t.Status = status
		list = append(list, t)
	}
	return list
}

// What the task tools write is what Tasks reads, field for field.
func TestTasksReadsWhatTheTaskToolsWrite(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	th, err := db.CreateThread(ctx, agentcore.Thread{ResourceID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := chat.Tasks(ctx, db, th.ID); err != nil || got != nil {
		t.Fatalf("no list yet: %v, %v", got, err)
	}
	want := everyField()
	in, err := json.Marshal(map[string]any{"tasks": want})
	if err != nil {
		t.Fatal(err)
	}
	write := toolkit.TaskTools(db)["task_write"]
	if err := write.ValidateInput(in); err != nil {
		t.Fatalf("task_write input %s: %v", in, err)
	}
	if _, err := write.Execute(ctx, in, &agentcore.ToolContext{ThreadID: th.ID, ResourceID: th.ResourceID}); err != nil {
		t.Fatal(err)
	}
	got, err := chat.Tasks(ctx, db, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v\nwrote %+v", got, want)
	}

	if err := db.SetState(ctx, th.ID, toolkit.TaskStateType, []byte(`{"not":"a list"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chat.Tasks(ctx, db, th.ID); err == nil {
		t.Fatal("an unreadable list read without an error")
	}
}

// A task_write call's arguments, as far as they are written, are read
// through the task's own JSON names; what is missing is filled in.
func TestPartialTasks(t *testing.T) {
	want := everyField()
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var parsed any // as the partial-JSON parser gives it
	if err := json.Unmarshal(raw, &parsed); err != nil {
		t.Fatal(err)
	}
	if got := chat.PartialTasks(parsed); !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v\nwrote %+v", got, want)
	}
	cut := []any{
		map[string]any{"id": "a", "content": "Run the tests"},
		map[string]any{"id": "b"}, // its content not written yet
	}
	got := chat.PartialTasks(cut)
	if len(got) != 1 || got[0] != (chat.Task{ID: "a", Content: "Run the tests", Status: toolkit.TaskPending, ActiveForm: "Run the tests"}) {
		t.Fatalf("a list cut short: %+v", got)
	}
	if chat.PartialTasks(nil) != nil || chat.PartialTasks("tasks") != nil {
		t.Fatal("no list is no tasks")
	}
}
