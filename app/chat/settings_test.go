package chat

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/storage"
)

// newChats is the chat rules over a real store in a temporary folder.
func newChats(t *testing.T) (*Chats, *storage.DB) {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	rt := agentcore.NewRuntime(db, slog.New(slog.NewTextHandler(t.Output(), nil)), &agentcore.Agent{ID: "parley", Model: "demo/scripted"})
	t.Cleanup(func() {
		rt.Close()
		db.Close()
	})
	return New(rt), db
}

func newThread(t *testing.T, db *storage.DB, meta map[string]any) string {
	t.Helper()
	th, err := db.CreateThread(t.Context(), agentcore.Thread{Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	return th.ID
}

func TestSettingsDefaults(t *testing.T) {
	c, db := newChats(t)
	s, err := c.Settings(t.Context(), newThread(t, db, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, Settings{Mode: ModeBuild}) {
		t.Fatalf("a new chat's settings: %+v", s)
	}
	if got := s.WorkspaceOr("/def"); got != "/def" {
		t.Fatalf("workspace: %q, want the default", got)
	}
	if _, err := c.Settings(t.Context(), "nope"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("unknown chat: %v", err)
	}
	if err := c.SetYOLO(t.Context(), "nope", true); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("set on an unknown chat: %v", err)
	}
}

// Values of the wrong type or unknown read as the defaults, and a change of
// one setting leaves the others' stored values, and keys that are no
// setting, as they were.
func TestSettingsGarbled(t *testing.T) {
	c, db := newChats(t)
	garbled := map[string]any{"mode": "turbo", "yolo": "true", "workspace": 42.0, "model": []any{"x"},
		"plans":  []any{"not a plan", map[string]any{"title": 7.0, "path": "p.md", "approvedAt": "yesterday"}},
		"mastra": map[string]any{"stateSignals": map[string]any{}}}
	id := newThread(t, db, garbled)
	s, err := c.Settings(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Mode: ModeBuild, Plans: []ApprovedPlan{{Path: "p.md"}}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("garbled settings read %+v, want %+v", s, want)
	}
	if err := c.SetYOLO(t.Context(), id, true); err != nil {
		t.Fatal(err)
	}
	th, err := db.GetThread(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	garbled["yolo"] = true
	if !reflect.DeepEqual(th.Metadata, garbled) {
		t.Fatalf("metadata after SetYOLO:\n got %v\nwant %v", th.Metadata, garbled)
	}
	if _, err := ParseMode("turbo"); err == nil {
		t.Fatal("ParseMode took an unknown mode")
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	c, db := newChats(t)
	ctx := t.Context()
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	want := Settings{Mode: ModePlan, YOLO: true, Workspace: "/w", Model: "openai/gpt-4.1",
		Plans: []ApprovedPlan{{Title: "One", Path: ".parley/plans/one.md", ApprovedAt: at}, {Path: "two.md"}}}
	id := newThread(t, db, Metadata(Settings{Model: want.Model}))
	if got, err := c.Settings(ctx, id); err != nil || got.Model != want.Model {
		t.Fatalf("a new chat's model: %+v %v", got, err)
	}
	got, err := c.Update(ctx, id, func(s *Settings) error { *s = want; return nil })
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Update returned %+v %v", got, err)
	}
	if got, err = c.Settings(ctx, id); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v %v, want %+v", got, err, want)
	}
	// What the runtime reads: the model under agentcore's key.
	th, _ := db.GetThread(ctx, id)
	if th.Metadata[agentcore.ThreadModelKey] != want.Model {
		t.Fatalf("model key: %v", th.Metadata)
	}
	// Back to the defaults: the workspace and model keys go.
	if _, err := c.Update(ctx, id, func(s *Settings) error { *s = Settings{Mode: ModeBuild}; return nil }); err != nil {
		t.Fatal(err)
	}
	th, _ = db.GetThread(ctx, id)
	if _, ok := th.Metadata["workspace"]; ok {
		t.Fatalf("workspace kept: %v", th.Metadata)
	}
	if got, _ := c.Settings(ctx, id); !reflect.DeepEqual(got, Settings{Mode: ModeBuild}) {
		t.Fatalf("reset: %+v", got)
	}
	// An error from fn writes nothing.
	boom := errors.New("boom")
	if _, err := c.Update(ctx, id, func(s *Settings) error { s.YOLO = true; return boom }); !errors.Is(err, boom) {
		t.Fatalf("Update's error: %v", err)
	}
	if got, _ := c.Settings(ctx, id); got.YOLO {
		t.Fatal("a failed update was written")
	}
}

// Writers of different settings at once never undo each other (the store
// reads and writes in one transaction).
func TestSettingsWritersRaceInStore(t *testing.T) {
	c, db := newChats(t)
	ctx := context.Background()
	for round := range 100 {
		id := newThread(t, db, Metadata(Settings{Mode: ModePlan}))
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := c.SetYOLO(ctx, id, true); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := c.Update(ctx, id, func(s *Settings) error {
				s.Mode = ModeBuild
				s.Plans = append(s.Plans, ApprovedPlan{Path: "p.md"})
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := c.SetWorkspace(ctx, id, "/w"); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		s, err := c.Settings(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !s.YOLO || s.Mode != ModeBuild || len(s.Plans) != 1 || s.Workspace != "/w" {
			t.Fatalf("round %d: a write was lost: %+v", round, s)
		}
	}
}

// Taking an approval back restores the mode and drops its plan, and keeps
// what another writer changed meanwhile.
func TestUndoApprovalKeepsOtherWrites(t *testing.T) {
	c, db := newChats(t)
	ctx := t.Context()
	id := newThread(t, db, Metadata(Settings{Mode: ModePlan, Plans: []ApprovedPlan{{Path: "old.md"}}}))
	plan := ApprovedPlan{Title: "New", Path: "new.md", ApprovedAt: time.Now().UTC().Truncate(time.Second)}
	if _, err := c.Update(ctx, id, func(s *Settings) error {
		s.Mode = ModeBuild
		s.Plans = append(s.Plans, plan)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetYOLO(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	c.undoApproval(ctx, id, ModePlan, plan)
	s, err := c.Settings(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Mode: ModePlan, YOLO: true, Plans: []ApprovedPlan{{Path: "old.md"}}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("after undo %+v, want %+v", s, want)
	}
}
