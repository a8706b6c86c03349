package agentcore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// A reply cut off by the provider is answered again on request: the new
// reply is the next version of the failed one, which stays in the tree;
// the model does not see it.
func TestRetryAfterProviderError(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "half an answer that breaks off " + strings.Repeat("x ", 20), CutAfter: 5})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "explain it"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	ms := messages(t, rt, th.ID)
	if len(ms) != 2 || ms[1].Status != agentcore.StatusError {
		t.Fatalf("after the cut: %d messages, last %s", len(ms), ms[len(ms)-1].Status)
	}
	failed := ms[1]

	srv.Push(scripted.Reply{Text: "The whole answer."})
	run, err := rt.Retry(t.Context(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	ms = messages(t, rt, th.ID)
	if len(ms) != 2 || ms[1].Content.Text() != "The whole answer." || ms[1].RunID != run.ID || ms[1].ParentID != ms[0].ID {
		t.Fatalf("after the retry: %+v", ms)
	}
	versions, err := rt.Siblings(t.Context(), th.ID, ms[1].ID)
	if v := versions[ms[1].ID]; err != nil || len(v.IDs) != 2 || v.IDs[0] != failed.ID || v.Index != 1 {
		t.Fatalf("the failed reply is not the version before: %+v %v", v, err)
	}
	if kept, err := rt.GetMessage(t.Context(), failed.ID); err != nil || kept.Status != agentcore.StatusError {
		t.Fatalf("the failed reply: %+v %v", kept, err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if n := len(last.Messages); last.Messages[n-1].Role != "user" || last.Messages[n-1].Content != "explain it" {
		t.Fatalf("the retry's model input ends with %+v, want the user's message", last.Messages[n-1])
	}
	for _, m := range last.Messages {
		if strings.Contains(m.Content, "half an answer") {
			t.Fatal("the model was sent the failed reply")
		}
	}
	if _, err := rt.Retry(t.Context(), th.ID); !errors.Is(err, agentcore.ErrNothingToRetry) {
		t.Fatalf("retry after a good reply: %v, want ErrNothingToRetry", err)
	}

	// Nor does any later turn show the model the failed attempt.
	srv.Push(scripted.Reply{Text: "More."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go on"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	reqs = srv.Requests()
	var roles []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.Contains(m.Content, "half an answer") {
			t.Fatal("a later turn was sent the failed reply")
		}
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); !strings.HasSuffix(got, "user,assistant,user") {
		t.Fatalf("a later turn's model input: %s", got)
	}
}

// A stopped reply can be retried too; a busy thread, an empty one and an
// unknown one cannot, and nothing changes.
func TestRetryRefusals(t *testing.T) {
	rt, srv := newRuntime(t)
	empty := thread(t, rt)
	if _, err := rt.Retry(t.Context(), empty.ID); !errors.Is(err, agentcore.ErrNothingToRetry) {
		t.Fatalf("retry in an empty thread: %v", err)
	}
	if _, err := rt.Retry(t.Context(), "nope"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("retry in an unknown thread: %v", err)
	}
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: strings.Repeat("word ", 400), Delay: 5 * time.Millisecond})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Retry(t.Context(), th.ID); !errors.Is(err, agentcore.ErrBusy) {
		t.Fatalf("retry while a reply streams: %v, want ErrBusy", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if l, ok := rt.Live(th.ID); ok && l.Content.Text() != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reply never began")
		}
	}
	rt.Stop(t.Context(), th.ID)
	srv.Push(scripted.Reply{Text: "Again, in full."})
	if _, err := rt.Retry(t.Context(), th.ID); err != nil {
		t.Fatalf("retry after Stop: %v", err)
	}
	waitIdle(t, rt, th.ID)
	ms := messages(t, rt, th.ID)
	if len(ms) != 2 || ms[1].Content.Text() != "Again, in full." {
		t.Fatalf("after retrying a stopped reply: %+v", ms)
	}
	tree, _ := rt.ListTree(t.Context(), th.ID)
	if len(tree) != 3 || tree[1].Status != agentcore.StatusInterrupted || tree[1].Active {
		t.Fatalf("the stopped reply is not kept as the version before: %+v", tree)
	}
}

// A reply stopped the moment it was asked for is marked stopped, not failed,
// whether or not its run had begun.
func TestStopAtOnceIsAStop(t *testing.T) {
	rt, srv := newRuntime(t)
	for range 5 {
		th := thread(t, rt)
		srv.Push(scripted.Reply{Text: "never mind"})
		sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"})
		if err != nil {
			t.Fatal(err)
		}
		rt.Stop(t.Context(), th.ID)
		m, err := rt.GetMessage(t.Context(), sent.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == agentcore.StatusError {
			t.Fatalf("a reply stopped at once is marked failed: %v", m.Content.Metadata["error"])
		}
	}
}
