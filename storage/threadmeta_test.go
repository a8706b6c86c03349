package storage

import (
	"errors"
	"reflect"
	"testing"

	"parley/agentcore"
)

// UpdateThreadMetadata hands fn the stored map (an empty one for none),
// writes what fn left, and writes nothing when fn fails.
func TestUpdateThreadMetadata(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	th, err := db.CreateThread(ctx, agentcore.Thread{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.UpdateThreadMetadata(ctx, th.ID, func(meta map[string]any) error {
		if len(meta) != 0 {
			t.Errorf("a thread without metadata handed %v", meta)
		}
		meta["a"] = 1.0
		return nil
	})
	if err != nil || !reflect.DeepEqual(got.Metadata, map[string]any{"a": 1.0}) {
		t.Fatalf("first update: %v %v", got.Metadata, err)
	}
	if _, err := db.UpdateThreadMetadata(ctx, th.ID, func(meta map[string]any) error { meta["b"] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := db.UpdateThreadMetadata(ctx, th.ID, func(meta map[string]any) error { meta["c"] = "x"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	stored, err := db.GetThread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"a": 1.0, "b": true}; !reflect.DeepEqual(stored.Metadata, want) {
		t.Fatalf("stored %v, want %v", stored.Metadata, want)
	}
	if _, err := db.UpdateThreadMetadata(ctx, "nope", func(map[string]any) error { return nil }); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("unknown thread: %v", err)
	}
}
