package agentcore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// say sends text and waits for the reply, which says reply.
func say(t *testing.T, rt *agentcore.Runtime, srv *scripted.Server, threadID, text, reply string) {
	t.Helper()
	srv.Push(scripted.Reply{Text: reply})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: threadID, Text: text}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, threadID)
}

// chat is the active branch as "role:text" lines.
func chat(t *testing.T, rt *agentcore.Runtime, threadID string) string {
	t.Helper()
	var b []string
	for _, m := range messages(t, rt, threadID) {
		b = append(b, string(m.Role)+":"+m.Content.Text())
	}
	return strings.Join(b, " | ")
}

// lastInput is what the model was sent last, as "role:content" lines
// without the system prompt.
func lastInput(t *testing.T, srv *scripted.Server) string {
	t.Helper()
	reqs := srv.Requests()
	var b []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role != "system" {
			b = append(b, m.Role+":"+m.Content)
		}
	}
	return strings.Join(b, " | ")
}

func byText(t *testing.T, rt *agentcore.Runtime, threadID, text string) agentcore.Message {
	t.Helper()
	tree, err := rt.ListTree(t.Context(), threadID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tree {
		if m.Content.Text() == text {
			return m
		}
	}
	t.Fatalf("no message %q in the tree", text)
	return agentcore.Message{}
}

// Edit, regenerate and switch: the chat and the model both follow the
// active branch, and every old version stays in the tree.
func TestBranchesFollowTheActiveBranch(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	say(t, rt, srv, th.ID, "one", "A1")
	say(t, rt, srv, th.ID, "two", "B1")
	say(t, rt, srv, th.ID, "three", "C1")

	branches := rt.Subscribe(th.ID, agentcore.EventBranch)
	defer branches.Close()

	// Edit an early message: a sibling of it, answered from what came before.
	two := byText(t, rt, th.ID, "two")
	srv.Push(scripted.Reply{Text: "B2"})
	if _, err := rt.Edit(t.Context(), agentcore.EditRequest{ThreadID: th.ID, MessageID: two.ID, Text: "TWO"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	if got := lastInput(t, srv); got != "user:one | assistant:A1 | user:TWO" {
		t.Fatalf("the edit's model input: %s", got)
	}
	if got := chat(t, rt, th.ID); got != "user:one | assistant:A1 | user:TWO | assistant:B2" {
		t.Fatalf("after the edit: %s", got)
	}
	select {
	case <-branches.Ready():
		if evs := branches.Drain(); len(evs) == 0 || evs[0].Type != agentcore.EventBranch || evs[0].ThreadID != th.ID {
			t.Fatalf("branch events: %+v", evs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no branch event after the edit")
	}
	TWO := byText(t, rt, th.ID, "TWO")
	if TWO.ParentID != two.ParentID {
		t.Fatalf("the edit is not a sibling: parent %q, want %q", TWO.ParentID, two.ParentID)
	}

	// Regenerate the new reply with another model: a sibling reply.
	b2 := byText(t, rt, th.ID, "B2")
	srv.Push(scripted.Reply{Text: "B3"})
	run, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: b2.ID, Model: "openai-compatible/other"})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	if run.Model != "openai-compatible/other" {
		t.Fatalf("regenerated with %q", run.Model)
	}
	if got := lastInput(t, srv); got != "user:one | assistant:A1 | user:TWO" {
		t.Fatalf("the regeneration's model input: %s", got)
	}
	if got := chat(t, rt, th.ID); got != "user:one | assistant:A1 | user:TWO | assistant:B3" {
		t.Fatalf("after regenerating: %s", got)
	}
	b3 := byText(t, rt, th.ID, "B3")
	sib, err := rt.Siblings(t.Context(), th.ID, b3.ID, TWO.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s := sib[b3.ID]; len(s.IDs) != 2 || s.IDs[0] != b2.ID || s.Index != 1 {
		t.Fatalf("B3's versions: %+v", s)
	}
	if s := sib[TWO.ID]; len(s.IDs) != 2 || s.IDs[0] != two.ID || s.Index != 1 {
		t.Fatalf("TWO's versions: %+v", s)
	}

	// Back to the first version of the turn: its whole branch comes back,
	// and the next message continues it.
	if err := rt.SwitchBranch(t.Context(), th.ID, two.ID); err != nil {
		t.Fatal(err)
	}
	if got := chat(t, rt, th.ID); got != "user:one | assistant:A1 | user:two | assistant:B1 | user:three | assistant:C1" {
		t.Fatalf("after switching back: %s", got)
	}
	say(t, rt, srv, th.ID, "four", "D1")
	if got := lastInput(t, srv); got != "user:one | assistant:A1 | user:two | assistant:B1 | user:three | assistant:C1 | user:four" {
		t.Fatalf("a turn on the old branch: %s", got)
	}
	// And to the edited one: it shows the version of its reply seen last.
	if err := rt.SwitchBranch(t.Context(), th.ID, TWO.ID); err != nil {
		t.Fatal(err)
	}
	if got := chat(t, rt, th.ID); got != "user:one | assistant:A1 | user:TWO | assistant:B3" {
		t.Fatalf("after switching to the edit: %s", got)
	}

	// Fork at B1 (not on the active branch): a new chat with that path.
	b1 := byText(t, rt, th.ID, "B1")
	fork, err := rt.Fork(t.Context(), th.ID, b1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := chat(t, rt, fork.ID); got != "user:one | assistant:A1 | user:two | assistant:B1" {
		t.Fatalf("the fork: %s", got)
	}
	from, _ := fork.Metadata[agentcore.MetaForkedFrom].(map[string]any)
	if from["threadId"] != th.ID || from["messageId"] != b1.ID {
		t.Fatalf("the fork's origin: %v", fork.Metadata)
	}
	say(t, rt, srv, fork.ID, "five", "E1")
	if got := lastInput(t, srv); got != "user:one | assistant:A1 | user:two | assistant:B1 | user:five" {
		t.Fatalf("the fork's first turn: %s", got)
	}
	if got := chat(t, rt, th.ID); got != "user:one | assistant:A1 | user:TWO | assistant:B3" {
		t.Fatalf("the fork changed its source: %s", got)
	}
}

// What cannot be edited, regenerated or switched to is refused by name,
// and nothing changes.
func TestBranchRefusals(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	say(t, rt, srv, th.ID, "one", "A1")
	other := thread(t, rt)
	say(t, rt, srv, other.ID, "elsewhere", "X1")
	user, reply := byText(t, rt, th.ID, "one"), byText(t, rt, th.ID, "A1")
	foreign := byText(t, rt, other.ID, "elsewhere")
	before := chat(t, rt, th.ID)

	if _, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: user.ID}); !errors.Is(err, agentcore.ErrNotAReply) {
		t.Fatalf("regenerate a user message: %v", err)
	}
	if _, err := rt.Edit(t.Context(), agentcore.EditRequest{ThreadID: th.ID, MessageID: reply.ID, Text: "x"}); !errors.Is(err, agentcore.ErrNotEditable) {
		t.Fatalf("edit a reply: %v", err)
	}
	if _, err := rt.Edit(t.Context(), agentcore.EditRequest{ThreadID: th.ID, MessageID: user.ID, Text: "   "}); err == nil {
		t.Fatal("an empty edit was sent")
	}
	for _, id := range []string{foreign.ID, "'; DROP TABLE messages; --", "", "../" + user.ID, strings.Repeat("x", 5000)} {
		if _, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: id}); !agentcore.IsNotFound(err) {
			t.Fatalf("regenerate %.40q: %v", id, err)
		}
		if _, err := rt.Edit(t.Context(), agentcore.EditRequest{ThreadID: th.ID, MessageID: id, Text: "x"}); !agentcore.IsNotFound(err) {
			t.Fatalf("edit %.40q: %v", id, err)
		}
		if err := rt.SwitchBranch(t.Context(), th.ID, id); !agentcore.IsNotFound(err) {
			t.Fatalf("switch to %.40q: %v", id, err)
		}
		if _, err := rt.Fork(t.Context(), th.ID, id); !agentcore.IsNotFound(err) {
			t.Fatalf("fork at %.40q: %v", id, err)
		}
	}
	if _, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: "no-such-thread", MessageID: reply.ID}); !agentcore.IsNotFound(err) {
		t.Fatalf("regenerate in a thread that does not exist: %v", err)
	}

	// While a reply is written, nothing moves the branch under it.
	srv.Push(scripted.Reply{Text: "slow " + strings.Repeat("word ", 50), Delay: 20 * time.Millisecond})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "two"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: reply.ID}); !errors.Is(err, agentcore.ErrBusy) {
		t.Fatalf("regenerate while busy: %v", err)
	}
	if _, err := rt.Edit(t.Context(), agentcore.EditRequest{ThreadID: th.ID, MessageID: user.ID, Text: "x"}); !errors.Is(err, agentcore.ErrBusy) {
		t.Fatalf("edit while busy: %v", err)
	}
	if err := rt.SwitchBranch(t.Context(), th.ID, user.ID); !errors.Is(err, agentcore.ErrBusy) {
		t.Fatalf("switch while busy: %v", err)
	}
	rt.Stop(t.Context(), th.ID)
	waitIdle(t, rt, th.ID)
	if got := chat(t, rt, th.ID); !strings.HasPrefix(got, before+" | user:two | assistant:") {
		t.Fatalf("the refusals changed the chat: %s", got)
	}
}

// A run that waits for the user is not left behind on another branch: the
// chat must answer or stop it first.
func TestBranchWaitsForTheUser(t *testing.T) {
	g := newGated(t)
	th := g.waitFor(t, scripted.ToolCall{ID: "q1", Name: "ask", Args: `{"question":"Which port?"}`})
	msgs := messages(t, g.rt, th.ID)
	if _, err := g.rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: msgs[1].ID}); !errors.Is(err, agentcore.ErrWaiting) {
		t.Fatalf("regenerate while waiting: %v", err)
	}
	if _, err := g.rt.Edit(t.Context(), agentcore.EditRequest{ThreadID: th.ID, MessageID: msgs[0].ID, Text: "x"}); !errors.Is(err, agentcore.ErrWaiting) {
		t.Fatalf("edit while waiting: %v", err)
	}
	if !g.rt.Stop(t.Context(), th.ID) {
		t.Fatal("nothing to stop")
	}
	g.srv.Push(scripted.Reply{Text: "fresh"})
	if _, err := g.rt.Regenerate(t.Context(), agentcore.RegenerateRequest{ThreadID: th.ID, MessageID: msgs[1].ID}); err != nil {
		t.Fatalf("regenerate once stopped: %v", err)
	}
	waitIdle(t, g.rt, th.ID)
	if got := chat(t, g.rt, th.ID); got != "user:go | assistant:fresh" {
		t.Fatalf("after regenerating the stopped run: %s", got)
	}
}
