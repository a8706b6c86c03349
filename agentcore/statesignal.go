package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// StateInput is one update of a state lane (spec §4.4): the model is told
// the current state of something (a file being watched, a build) as a
// snapshot or a delta, and the same state twice is sent once.
type StateInput struct {
	ID         string         `json:"id"`       // the lane
	CacheKey   string         `json:"cacheKey"` // equal keys are equal states
	Contents   string         `json:"contents"`
	Mode       string         `json:"mode,omitempty"` // snapshot (default) | delta
	Value      any            `json:"value,omitempty"`
	Delta      any            `json:"delta,omitempty"`
	Attributes Attrs          `json:"attributes,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	TagName    string         `json:"tagName,omitempty"` // default "state"
}

// StateResult is what SendStateSignal did: the signal's fate, or skipped
// with reason "unchanged".
type StateResult struct {
	Accepted
	Skipped bool    `json:"skipped"`
	Reason  string  `json:"reason,omitempty"`
	Signal  *Signal `json:"signal,omitempty"`
}

// stateLane is the tracking of one lane kept on the thread's metadata under
// mastra.stateSignals.<id>.
type stateLane struct {
	CurrentCacheKey      string    `json:"currentCacheKey"`
	CurrentMode          string    `json:"currentMode"`
	Version              int       `json:"version"`
	LastSignalID         string    `json:"lastSignalId"`
	LastSnapshotSignalID string    `json:"lastSnapshotSignalId,omitempty"`
	UpdatedAt            time.Time `json:"updatedAt"`
}

// SendStateSignal sends a state update to a thread unless the lane already
// holds that state (same cacheKey and mode): then nothing is stored and the
// result says skipped, "unchanged". An idle thread keeps the update for its
// next run unless to.IfIdle says otherwise: a state change alone does not
// wake the agent.
func (rt *Runtime) SendStateSignal(ctx context.Context, in StateInput, to SignalTarget) (StateResult, error) {
	switch {
	case in.ID == "":
		return StateResult{}, errors.New("state signal id is required")
	case in.CacheKey == "":
		return StateResult{}, errors.New("state signal cacheKey is required")
	}
	mode := cmpStr(in.Mode, "snapshot")
	if mode != "snapshot" && mode != "delta" {
		return StateResult{}, fmt.Errorf("state signal mode %q: use snapshot or delta", in.Mode)
	}
	if to.ThreadID == "" {
		return StateResult{}, errors.New("state signals need a thread: give resourceId and threadId")
	}
	lock := rt.lane("state\x00" + to.ThreadID)
	lock.Lock()
	defer lock.Unlock()
	thread, err := rt.store.GetThread(ctx, to.ThreadID)
	if err != nil {
		return StateResult{}, fmt.Errorf("state signal thread %s: %w", to.ThreadID, err)
	}
	lanes := stateLanes(thread.Metadata)
	prev, seen := lanes[in.ID]
	if seen && prev.CurrentCacheKey == in.CacheKey && prev.CurrentMode == mode {
		return StateResult{Accepted: Accepted{Action: Persist}, Skipped: true, Reason: "unchanged"}, nil
	}
	version := prev.Version + 1
	meta := map[string]any{}
	for k, v := range in.Metadata {
		meta[k] = v
	}
	meta["state"] = map[string]any{"id": in.ID, "threadId": thread.ID, "cacheKey": in.CacheKey, "mode": mode, "version": version}
	if in.Value != nil {
		meta["value"] = in.Value
	}
	if in.Delta != nil {
		meta["delta"] = in.Delta
	}
	if to.IfIdle.Behavior == "" {
		to.IfIdle.Behavior = Persist
	}
	acc, sig, err := rt.SendSignal(ctx, Signal{Type: SignalState, TagName: in.TagName, Contents: in.Contents, Attributes: in.Attributes, Metadata: meta}, to)
	if err != nil {
		return StateResult{}, err
	}
	if acc.Action == Discard {
		return StateResult{Accepted: acc, Signal: &sig}, nil
	}
	lane := stateLane{CurrentCacheKey: in.CacheKey, CurrentMode: mode, Version: version, LastSignalID: sig.ID,
		LastSnapshotSignalID: prev.LastSnapshotSignalID, UpdatedAt: time.Now().UTC()}
	if mode == "snapshot" {
		lane.LastSnapshotSignalID = sig.ID
	}
	lanes[in.ID] = lane
	// Only mastra.stateSignals changes, atomically: the chat's other
	// settings may change meanwhile.
	_, err = rt.store.UpdateThreadMetadata(ctx, thread.ID, func(md map[string]any) error {
		mastra, _ := md["mastra"].(map[string]any)
		if mastra == nil {
			mastra = map[string]any{}
		}
		mastra["stateSignals"] = lanes
		md["mastra"] = mastra
		return nil
	})
	if err != nil {
		return StateResult{}, fmt.Errorf("track state lane %s: %w", in.ID, err)
	}
	return StateResult{Accepted: acc, Signal: &sig}, nil
}

// stateLanes reads mastra.stateSignals from thread metadata.
func stateLanes(md map[string]any) map[string]stateLane {
	out := map[string]stateLane{}
	mastra, _ := md["mastra"].(map[string]any)
	raw, ok := mastra["stateSignals"]
	if !ok {
		return out
	}
	_ = remarshal(raw, &out)
	return out
}

// remarshal converts v (decoded JSON) into out through JSON.
func remarshal(v any, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
