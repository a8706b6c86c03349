package storage

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

func TestRuns(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	start := time.UnixMilli(1_700_000_000_123)
	r := agentcore.Run{ID: "run-1", ThreadID: th.ID, AgentID: "build", Model: "openai/gpt-5", StartedAt: start}
	if err := db.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := r
	want.Status = agentcore.RunRunning
	want.StartedAt = start.UTC()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("created run = %+v\nwant          %+v", got, want)
	}

	finish := start.Add(1500 * time.Millisecond)
	want.Status, want.Error, want.FinishedAt = agentcore.RunFailed, "provider: 529 overloaded", finish.UTC()
	want.Usage = agentcore.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, ReasoningTokens: 2, CachedTokens: 3}
	if err := db.FinishRun(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err = db.GetRun(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("finished run = %+v\nwant           %+v", got, want)
	}

	if err := db.CreateRun(ctx, agentcore.Run{ThreadID: th.ID}); err == nil {
		t.Error("CreateRun without an id succeeded")
	}
}

func TestListRunsByStatus(t *testing.T) {
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	base := time.Now().UTC().Truncate(time.Millisecond)
	for i, st := range []agentcore.RunStatus{agentcore.RunDone, agentcore.RunFailed, agentcore.RunSuspended, agentcore.RunFailed} {
		r := agentcore.Run{ID: fmt.Sprintf("run%d", i), ThreadID: th.ID, AgentID: "a", Model: "m", Status: agentcore.RunRunning, StartedAt: base.Add(time.Duration(i) * time.Second)}
		if err := db.CreateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		r.Status, r.Error = st, "boom"
		if err := db.FinishRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := db.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunFailed, agentcore.RunSuspended}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "run3,run2,run1" {
		t.Fatalf("runs %v, want newest first, failed and suspended only", ids)
	}
	if runs, _ := db.ListRuns(t.Context(), agentcore.RunQuery{Statuses: []agentcore.RunStatus{agentcore.RunFailed}, Limit: 1}); len(runs) != 1 || runs[0].ID != "run3" || runs[0].Error != "boom" {
		t.Fatalf("limited %+v", runs)
	}
}
