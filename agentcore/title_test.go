package agentcore_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/storage"
)

// waitTitle waits until the thread's title is want.
func waitTitle(t *testing.T, rt *agentcore.Runtime, id, want string) {
	t.Helper()
	// Generous: under -race on a loaded machine a long reply takes seconds
	// to stream before the title is asked for.
	deadline := time.Now().Add(60 * time.Second)
	for {
		th, err := rt.GetThread(t.Context(), id)
		if err == nil && th.Title == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("title %q, want %q", th.Title, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// After the first reply, the thread's model names the thread, once; the
// title call is not one of the thread's turns.
func TestAutoTitle(t *testing.T) {
	rt, srv := newRuntime(t)
	rt.AutoTitle = true
	srv.SetTitles(func(r scripted.Request) string { return "Title: \"Dark theme plan\"." })
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "Sure."}, scripted.Reply{Text: "Again."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "Add a dark theme to the settings page\nwith a toggle"}); err != nil {
		t.Fatal(err)
	}
	waitTitle(t, rt, th.ID, "Dark theme plan")
	reqs := srv.TitleRequests()
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0].Messages[0].Content, scripted.TitleMarker) ||
		!strings.Contains(reqs[0].LastUserText(), "Add a dark theme") {
		t.Fatalf("title requests: %+v", reqs)
	}
	if got := len(srv.Requests()); got != 1 {
		t.Fatalf("%d turns reached the model, want 1", got)
	}
	th2, _ := rt.GetThread(t.Context(), th.ID)
	if _, marked := th2.Metadata["autoTitle"]; marked {
		t.Fatal("the thread is still marked for a title")
	}
	// A second reply names nothing again.
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "more"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(srv.TitleRequests()); n != 1 {
		t.Fatalf("%d title requests after two replies", n)
	}
}

// A thread renamed while its title is being written keeps its name.
func TestAutoTitleKeepsARename(t *testing.T) {
	rt, srv := newRuntime(t)
	rt.AutoTitle = true
	asked, release := make(chan struct{}), make(chan struct{})
	srv.SetTitles(func(scripted.Request) string {
		close(asked)
		<-release
		return "Model title"
	})
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "Sure."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	<-asked
	mine := "My own name"
	if _, err := rt.UpdateThread(t.Context(), th.ID, agentcore.ThreadPatch{Title: &mine}); err != nil {
		t.Fatal(err)
	}
	close(release)
	time.Sleep(200 * time.Millisecond)
	waitTitle(t, rt, th.ID, mine)
}

// Without AutoTitle, or when the reply failed, the first message's title
// stays and the model is not asked.
func TestAutoTitleOnlyWhenOnAndAnswered(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "Sure."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "hello there"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	rt2, srv2 := newRuntime(t)
	rt2.AutoTitle = true
	th2 := thread(t, rt2)
	srv2.Push(scripted.Reply{Status: 400})
	if _, err := rt2.Send(t.Context(), agentcore.SendRequest{ThreadID: th2.ID, Text: "hello again"}); err != nil {
		t.Fatal(err)
	}
	if err := rt2.Wait(t.Context(), th2.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(srv.TitleRequests()) + len(srv2.TitleRequests()); n != 0 {
		t.Fatalf("%d title requests", n)
	}
	waitTitle(t, rt, th.ID, "hello there")
	waitTitle(t, rt2, th2.ID, "hello again")
}

// The prompt the runtime sends is the one the scripted model recognises.
func TestTitlePromptIsMarked(t *testing.T) {
	if !strings.HasPrefix(agentcore.TitlePrompt, scripted.TitleMarker) {
		t.Fatalf("TitlePrompt %q does not begin with scripted.TitleMarker %q", agentcore.TitlePrompt, scripted.TitleMarker)
	}
}

// lengthWatch is a store that remembers the longest text of a message that
// a read from a thread's start (not its last messages) gave back.
type lengthWatch struct {
	*storage.DB
	mu      sync.Mutex
	longest int
}

func (s *lengthWatch) ListMessages(ctx context.Context, threadID string, q agentcore.MessageQuery) ([]agentcore.Message, error) {
	msgs, err := s.DB.ListMessages(ctx, threadID, q)
	if !q.Last {
		s.mu.Lock()
		for _, m := range msgs {
			s.longest = max(s.longest, len(m.Content.Text()))
		}
		s.mu.Unlock()
	}
	return msgs, err
}

// The title is asked for from the thread's first user message, even when
// another comes before it, and the long reply after it is not read for it.
func TestAutoTitleReadsOnlyTheFirstUserMessage(t *testing.T) {
	srv := scripted.NewServer()
	t.Cleanup(srv.Close)
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	store := &lengthWatch{DB: db}
	cfg := llm.Config{BaseURLs: map[string]string{"openai-compatible": srv.URL()}, APIKeys: map[string]string{"openai-compatible": "k"},
		Getenv: func(string) string { return "" }, MaxRetries: -1}
	rt := agentcore.NewRuntime(store, nil, &agentcore.Agent{ID: "a", Model: "openai-compatible/test",
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) }})
	t.Cleanup(func() { rt.Close(); db.Close() })
	rt.AutoTitle = true
	srv.SetTitles(func(scripted.Request) string { return "Long answer" })
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: strings.Repeat("a long reply ", 1<<12)}) // 53 KB: far over what the title may read
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "Write it all out",
		Earlier: []agentcore.Message{{Role: agentcore.RoleAssistant, Content: agentcore.TextContent("Welcome back.")}}}); err != nil {
		t.Fatal(err)
	}
	waitTitle(t, rt, th.ID, "Long answer")
	if reqs := srv.TitleRequests(); len(reqs) != 1 || !strings.Contains(reqs[0].LastUserText(), "Write it all out") {
		t.Fatalf("title requests: %+v", reqs)
	}
	if store.longest > 1<<10 {
		t.Fatalf("reading for the title gave back a message of %d bytes", store.longest)
	}
}
