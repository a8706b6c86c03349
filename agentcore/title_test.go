package agentcore_test

import (
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// waitTitle waits until the thread's title is want.
func waitTitle(t *testing.T, rt *agentcore.Runtime, id, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
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
