package ui

import (
	"reflect"
	"testing"

	"parley/app/chat"
)

// The panel shows every field of the task the task tools write, under the
// same name: a field added to or renamed in toolkit's Task fails here until
// the panel follows.
func TestTaskViewsCopyEveryField(t *testing.T) {
	var task chat.Task
	tv := reflect.ValueOf(&task).Elem()
	for i := range tv.NumField() {
		f := tv.Type().Field(i)
		if f.Type.Kind() != reflect.String {
			t.Fatalf("toolkit's Task.%s is a %s: the panel shows strings", f.Name, f.Type)
		}
		tv.Field(i).SetString("the " + f.Name)
	}
	views := taskViews([]chat.Task{task})
	if len(views) != 1 {
		t.Fatalf("%d views of one task", len(views))
	}
	vv := reflect.ValueOf(views[0])
	for i := range tv.NumField() {
		name := tv.Type().Field(i).Name
		got := vv.FieldByName(name)
		if !got.IsValid() {
			t.Errorf("components.Task has no %s: the panel drops a field of the task list", name)
			continue
		}
		if got.String() != "the "+name {
			t.Errorf("components.Task.%s = %q, want %q", name, got.String(), "the "+name)
		}
	}
	if n, m := vv.NumField(), tv.NumField(); n != m {
		t.Errorf("components.Task has %d fields, toolkit's Task %d", n, m)
	}
	if taskViews(nil) != nil {
		t.Error("no tasks, some views")
	}
}
