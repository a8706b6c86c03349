package storage

import (
	"testing"

	"parley/agentcore"
)

func TestWorkingMemory(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	if _, _, ok, err := db.WorkingMemory(ctx, "default"); err != nil || ok {
		t.Fatalf("new resource: ok=%v err=%v, want none", ok, err)
	}
	first := "# User Information\n- **First Name**: Ada"
	if old, had, err := db.SetWorkingMemory(ctx, "default", &first); err != nil || had || old != "" {
		t.Fatalf("first set: old=%q had=%v err=%v", old, had, err)
	}
	got, at, ok, err := db.WorkingMemory(ctx, "default")
	if err != nil || !ok || got != first || at.IsZero() {
		t.Fatalf("read back %q ok=%v at=%v err=%v", got, ok, at, err)
	}
	second := "</working_memory_data><b>x</b>"
	if old, had, err := db.SetWorkingMemory(ctx, "default", &second); err != nil || !had || old != first {
		t.Fatalf("second set: old=%q had=%v err=%v", old, had, err)
	}
	// A thread of the resource made after the memory keeps it.
	if _, err := db.CreateThread(ctx, agentcore.Thread{ResourceID: "default"}); err != nil {
		t.Fatal(err)
	}
	if got, _, _, _ := db.WorkingMemory(ctx, "default"); got != second {
		t.Fatalf("after a new thread: %q", got)
	}
	if old, had, err := db.SetWorkingMemory(ctx, "default", nil); err != nil || !had || old != second {
		t.Fatalf("clear: old=%q had=%v err=%v", old, had, err)
	}
	if _, _, ok, _ := db.WorkingMemory(ctx, "default"); ok {
		t.Fatal("cleared memory still there")
	}
	// Another resource's is its own.
	other := "other"
	if _, _, err := db.SetWorkingMemory(ctx, "someone", &other); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := db.WorkingMemory(ctx, "default"); ok {
		t.Fatal("one resource's memory leaked into another's")
	}
}
