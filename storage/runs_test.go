package storage

import (
	"context"
	"reflect"
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
