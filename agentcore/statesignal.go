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
	prev, seen, rebuilt, err := rt.laneOnBranch(ctx, thread.ID, in.ID, lanes)
	if err != nil {
		return StateResult{}, err
	}
	if seen && prev.CurrentCacheKey == in.CacheKey && prev.CurrentMode == mode {
		if rebuilt {
			// Kept, so the next update on this branch need not look again.
			if err := rt.trackLane(ctx, thread.ID, in.ID, prev); err != nil {
				return StateResult{}, err
			}
		}
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
	if err := rt.trackLane(ctx, thread.ID, in.ID, lane); err != nil {
		return StateResult{}, err
	}
	return StateResult{Accepted: acc, Signal: &sig}, nil
}

// trackLane writes lane id's tracking on the thread's metadata. Only
// mastra.stateSignals.<id> changes, atomically: the chat's other settings
// may change meanwhile. The caller holds the thread's state lock.
func (rt *Runtime) trackLane(ctx context.Context, threadID, id string, lane stateLane) error {
	_, err := rt.store.UpdateThreadMetadata(ctx, threadID, func(md map[string]any) error {
		mastra, _ := md["mastra"].(map[string]any)
		if mastra == nil {
			mastra = map[string]any{}
		}
		lanes := stateLanes(md)
		lanes[id] = lane
		mastra["stateSignals"] = lanes
		md["mastra"] = mastra
		return nil
	})
	if err != nil {
		return fmt.Errorf("track state lane %s: %w", id, err)
	}
	return nil
}

// statePage is how many messages laneOnBranch reads at a time, newest
// first: a lane's last signal is usually near the end of the branch, and a
// page of long replies (up to a few MiB each) stays small in memory.
const statePage = 20

// laneOnBranch is lane id as the thread's active branch holds it. The
// tracking on the thread's metadata is the thread's, but the signals it
// names are messages on one branch: after an edit, a regeneration or a
// switch, the model reading the active branch may never have seen them.
// The tracking stands while its last signal (and its last snapshot, which
// a delta is read on top of) are on the active branch. Otherwise the lane
// is rebuilt from the newest state signal of that id on the active branch,
// with that branch's own versions, or is unseen (seen false) when the
// branch has none: the update is then sent, a delta as it came, with no
// snapshot recorded (spec §4.4 leaves re-snapshotting to the sender, whose
// processor is told hasSnapshot false when the snapshot is not in view).
func (rt *Runtime) laneOnBranch(ctx context.Context, threadID, id string, lanes map[string]stateLane) (lane stateLane, seen, rebuilt bool, err error) {
	if tracked, ok := lanes[id]; ok {
		stands, err := rt.onBranch(ctx, threadID, tracked.LastSignalID)
		if err == nil && stands && tracked.LastSnapshotSignalID != "" && tracked.LastSnapshotSignalID != tracked.LastSignalID {
			stands, err = rt.onBranch(ctx, threadID, tracked.LastSnapshotSignalID)
		}
		if err != nil {
			return stateLane{}, false, false, fmt.Errorf("state lane %s: %w", id, err)
		}
		if stands {
			return tracked, true, false, nil
		}
	}
	// Also when the thread has no tracking of the lane: a fork holds the
	// signals of its branch but not the tracking.
	q := MessageQuery{Limit: statePage, Last: true}
	for {
		page, err := rt.store.ListMessages(ctx, threadID, q)
		if err != nil {
			return stateLane{}, false, false, fmt.Errorf("state lane %s: read the active branch: %w", id, err)
		}
		for i := len(page) - 1; i >= 0; i-- {
			st, ok := stateOf(page[i], id)
			if !ok {
				continue
			}
			if !seen {
				seen = true
				lane = stateLane{CurrentCacheKey: st.CacheKey, CurrentMode: cmpStr(st.Mode, "snapshot"), Version: st.Version,
					LastSignalID: page[i].ID, UpdatedAt: page[i].CreatedAt}
			}
			if cmpStr(st.Mode, "snapshot") == "snapshot" {
				lane.LastSnapshotSignalID = page[i].ID
				return lane, true, true, nil
			}
		}
		if len(page) < statePage {
			return lane, seen, seen, nil
		}
		q.BeforeSeq = page[0].Seq
	}
}

// onBranch reports whether message id is on threadID's active branch; a
// message since deleted is not.
func (rt *Runtime) onBranch(ctx context.Context, threadID, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	m, err := rt.store.GetMessage(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.ThreadID == threadID && m.Active, nil
}

// signalState is a state signal's metadata.state.
type signalState struct {
	ID       string `json:"id"`
	CacheKey string `json:"cacheKey"`
	Mode     string `json:"mode"`
	Version  int    `json:"version"`
}

// stateOf reads the state of lane id from a stored state signal; ok is
// false when m is not one.
func stateOf(m Message, id string) (signalState, bool) {
	sig, ok := SignalOf(m)
	if !ok || sig.Type != SignalState {
		return signalState{}, false
	}
	var st signalState
	if raw, ok := sig.Metadata["state"]; !ok || remarshal(raw, &st) != nil || st.ID != id || st.CacheKey == "" {
		return signalState{}, false
	}
	return st, true
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
