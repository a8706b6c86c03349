package agentcore_test

import (
	"fmt"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// stateLane is the thread's tracking of state lane id.
func stateLane(t *testing.T, rt *agentcore.Runtime, threadID, id string) map[string]any {
	t.Helper()
	th, err := rt.GetThread(t.Context(), threadID)
	if err != nil {
		t.Fatal(err)
	}
	mastra, _ := th.Metadata["mastra"].(map[string]any)
	lanes, _ := mastra["stateSignals"].(map[string]any)
	lane, _ := lanes[id].(map[string]any)
	return lane
}

// A state lane follows the active branch: on a branch the lane's last
// signal is not on, the model never saw that state, so the same state is
// sent again there; back on the branch that holds it, it is unchanged.
func TestStateSignalLaneFollowsTheBranch(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	to := agentcore.SignalTarget{ThreadID: th.ID}
	green := agentcore.StateInput{ID: "build", CacheKey: "sha-1", Contents: "build is green"}

	say(t, rt, srv, th.ID, "one", "A1")
	first, err := rt.SendStateSignal(t.Context(), green, to)
	if err != nil || first.Skipped {
		t.Fatalf("first: %+v %v", first, err)
	}
	say(t, rt, srv, th.ID, "two", "B1")
	if got := lastInput(t, srv); !strings.Contains(got, "build is green") {
		t.Fatalf("the state never reached the model: %s", got)
	}

	// A new version of A1: its branch is "one", "A2", without the state.
	a1 := byText(t, rt, th.ID, "A1")
	srv.Push(scripted.Reply{Text: "A2"})
	if _, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: a1.ID}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	if got := chat(t, rt, th.ID); got != "user:one | assistant:A2" {
		t.Fatalf("after regenerating: %s", got)
	}

	again, err := rt.SendStateSignal(t.Context(), green, to)
	if err != nil || again.Skipped || again.Signal == nil {
		t.Fatalf("the same state on a branch that never had it: %+v %v", again, err)
	}
	if v := again.Signal.Metadata["state"].(map[string]any)["version"]; v != 1 {
		t.Fatalf("version %v on a branch without the lane, want 1", v)
	}
	stored, err := rt.GetMessage(t.Context(), again.Signal.ID)
	if err != nil || !stored.Active {
		t.Fatalf("the state is not on the active branch: %+v %v", stored, err)
	}
	say(t, rt, srv, th.ID, "three", "C1")
	if got, want := lastInput(t, srv), "user:one | assistant:A2 | user:"; !strings.HasPrefix(got, want) ||
		!strings.Contains(got, "build is green") || !strings.HasSuffix(got, "three") {
		t.Fatalf("the model on the new branch was not told the state: %s", got)
	}
	if lane := stateLane(t, rt, th.ID, "build"); lane["lastSignalId"] != again.Signal.ID || lane["lastSnapshotSignalId"] != again.Signal.ID {
		t.Fatalf("tracking %+v, want the new branch's signal %s", lane, again.Signal.ID)
	}
	if skip, err := rt.SendStateSignal(t.Context(), green, to); err != nil || !skip.Skipped || skip.Reason != "unchanged" {
		t.Fatalf("the same state twice on one branch: %+v %v", skip, err)
	}

	// Back on the first branch, which holds the state: unchanged.
	if err := rt.SwitchBranch(t.Context(), th.ID, a1.ID); err != nil {
		t.Fatal(err)
	}
	back, err := rt.SendStateSignal(t.Context(), green, to)
	if err != nil || !back.Skipped || back.Reason != "unchanged" {
		t.Fatalf("the same state back on the branch that has it: %+v %v", back, err)
	}
	if lane := stateLane(t, rt, th.ID, "build"); lane["lastSignalId"] != first.Signal.ID || lane["lastSnapshotSignalId"] != first.Signal.ID {
		t.Fatalf("tracking %+v, want the first branch's signal %s", lane, first.Signal.ID)
	}
	// A new state there continues that branch's versions.
	red := green
	red.CacheKey, red.Contents = "sha-2", "build is red"
	next, err := rt.SendStateSignal(t.Context(), red, to)
	if err != nil || next.Skipped {
		t.Fatalf("a new state: %+v %v", next, err)
	}
	if v := next.Signal.Metadata["state"].(map[string]any)["version"]; v != 2 {
		t.Fatalf("version %v, want 2", v)
	}
}

// A delta is read on top of its lane's last snapshot. On a branch with no
// signal of the lane, the delta goes as it came (spec §4.4 leaves
// re-snapshotting to the sender) and the lane records no snapshot.
func TestStateSignalDeltaOnABranchWithoutItsSnapshot(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	to := agentcore.SignalTarget{ThreadID: th.ID}
	say(t, rt, srv, th.ID, "one", "A1")
	snap := agentcore.StateInput{ID: "files", CacheKey: "k1", Contents: "a.go b.go"}
	if res, err := rt.SendStateSignal(t.Context(), snap, to); err != nil || res.Skipped {
		t.Fatalf("snapshot: %+v %v", res, err)
	}
	delta := agentcore.StateInput{ID: "files", CacheKey: "k2", Mode: "delta", Contents: "+c.go"}
	if res, err := rt.SendStateSignal(t.Context(), delta, to); err != nil || res.Skipped {
		t.Fatalf("delta: %+v %v", res, err)
	}

	a1 := byText(t, rt, th.ID, "A1")
	srv.Push(scripted.Reply{Text: "A2"})
	if _, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: a1.ID}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)

	res, err := rt.SendStateSignal(t.Context(), delta, to)
	if err != nil || res.Skipped {
		t.Fatalf("the delta on a branch that never had the lane: %+v %v", res, err)
	}
	state := res.Signal.Metadata["state"].(map[string]any)
	if state["mode"] != "delta" || state["version"] != 1 {
		t.Fatalf("state %+v, want the delta as it came, version 1", state)
	}
	lane := stateLane(t, rt, th.ID, "files")
	if lane["lastSignalId"] != res.Signal.ID || lane["lastSnapshotSignalId"] != nil {
		t.Fatalf("tracking %+v: the branch has no snapshot", lane)
	}
}

// A fork holds its branch's state signals but not the thread's tracking:
// the state its model has read is not sent again.
func TestStateSignalLaneInAFork(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	green := agentcore.StateInput{ID: "build", CacheKey: "sha-1", Contents: "build is green"}
	say(t, rt, srv, th.ID, "one", "A1")
	if res, err := rt.SendStateSignal(t.Context(), green, agentcore.SignalTarget{ThreadID: th.ID}); err != nil || res.Skipped {
		t.Fatalf("first: %+v %v", res, err)
	}
	// More than a page of messages after the signal.
	for i := range 15 {
		say(t, rt, srv, th.ID, fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))
	}
	say(t, rt, srv, th.ID, "two", "B1")
	fork, err := rt.Fork(t.Context(), th.ID, byText(t, rt, th.ID, "B1").ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.SendStateSignal(t.Context(), green, agentcore.SignalTarget{ThreadID: fork.ID})
	if err != nil || !res.Skipped || res.Reason != "unchanged" {
		t.Fatalf("the same state in the fork: %+v %v", res, err)
	}
	green.CacheKey = "sha-2"
	if res, err = rt.SendStateSignal(t.Context(), green, agentcore.SignalTarget{ThreadID: fork.ID}); err != nil || res.Skipped {
		t.Fatalf("a new state in the fork: %+v %v", res, err)
	}
	if v := res.Signal.Metadata["state"].(map[string]any)["version"]; v != 2 {
		t.Fatalf("version %v, want 2: the fork's lane goes on", v)
	}
}
