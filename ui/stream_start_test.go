package ui

import (
	"context"
	"iter"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/storage"
)

// heldModel answers "first" once first is closed, and ends its answer
// once end is: until then its run has started and shows nothing, then it
// is being written.
type heldModel struct{ first, end chan struct{} }

func (heldModel) Spec() string { return "test/held" }

func (m heldModel) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		for _, step := range []struct {
			gate chan struct{}
			part llm.Part
		}{
			{m.first, llm.Part{Type: llm.PartTextDelta, Text: "first"}},
			{m.end, llm.Part{Type: llm.PartFinish, FinishReason: "stop", Usage: llm.Usage{InputTokens: 1840, OutputTokens: 120, TotalTokens: 1960}}},
		} {
			select {
			case <-step.gate:
			case <-ctx.Done():
				return
			}
			if !yield(step.part, nil) {
				return
			}
		}
	}
}

// A run's start sends the page its messages and holds the rest (the
// sidebar, the header, the composer's buttons) for the reply's first
// frame, which the frames before it do not delay, and which carries the
// rest after its text: at 50 tok/s a reply's first tokens waited behind
// all of it (issue 12). At the run's end the rest follows the reply's
// last frame sideDelay later; the page ends with all of it.
func TestRunStartSendsTheReplyFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
		if err != nil {
			t.Fatal(err)
		}
		model := heldModel{first: make(chan struct{}), end: make(chan struct{})}
		rt := agentcore.NewRuntimeOn(db, agentcore.NewBus(), nil, &agentcore.Agent{ID: "parley", Model: "test/held",
			Models: func(string) (llm.Model, error) { return model, nil }})
		defer db.Close()
		defer rt.Close()
		s, err := New(Config{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Shutdown()
		th, err := rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default"})
		if err != nil {
			t.Fatal(err)
		}

		// The stream of a page open on the thread, its events played one
		// at a time, each followed by the frame the stream would send.
		threadSub := rt.Subscribe(th.ID)
		defer threadSub.Close()
		listSub := rt.Subscribe("", agentcore.EventThread, agentcore.EventMessage, agentcore.EventStart, agentcore.EventFinish)
		defer listSub.Close()
		rec := httptest.NewRecorder()
		out := s.streamWriter(rec)
		v := &chatStream{s: s, id: th.ID, out: out, sse: datastar.NewSSE(out, httptest.NewRequest("GET", "/", nil)),
			shown: map[string]bool{}, live: map[string]*liveReply{}, gate: newGate()}
		defer v.gate.stop()
		if err := v.full(ctx); err != nil {
			t.Fatal(err)
		}
		sent := func() string {
			defer rec.Body.Reset()
			return rec.Body.String()
		}
		sent()
		// What the run's start changes: the chat's title (from its first
		// message, hostile here), its row in the sidebar, the buttons.
		side := []string{`id="chat-title"`, `id="thread-` + th.ID + `"`, `id="composer-actions"`}
		frame := func() string {
			t.Helper()
			if err := v.flush(ctx); err != nil {
				t.Fatal(err)
			}
			return sent()
		}
		// play takes the thread's events until the run waits for its
		// model, each in a frame of its own, and returns what they sent.
		play := func() string {
			t.Helper()
			var b strings.Builder
			for {
				synctest.Wait()
				events := threadSub.Drain()
				if len(events) == 0 {
					return b.String()
				}
				for _, e := range events {
					var list []agentcore.Event
					switch e.Type { // what the sidebar hears of it comes with it
					case agentcore.EventThread, agentcore.EventMessage, agentcore.EventStart, agentcore.EventFinish:
						list = listSub.Drain()
					}
					v.take([]agentcore.Event{e}, list)
					b.WriteString(frame())
				}
			}
		}

		if _, err := rt.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "<b>count</b>"}); err != nil {
			t.Fatal(err)
		}
		start := play()
		if !strings.Contains(start, "msg-user") || !strings.Contains(start, "msg-assistant") {
			t.Fatalf("the run's start did not send both messages:\n%s", start)
		}
		for _, part := range side {
			if strings.Contains(start, part) {
				t.Errorf("the run's start sent %s before the reply's first frame", part)
			}
		}
		if v.paced {
			t.Error("the start's frame patched nothing of the reply, yet it spaces the first token's frame a frame after it")
		}
		if !v.sideDirty() {
			t.Fatal("nothing is left for after the reply's first frame")
		}
		if wait := v.wait(time.Time{}); wait <= 0 || wait > startHold {
			t.Errorf("the rest waits %v for the reply's first frame, want up to %v", wait, startHold)
		}

		close(model.first)
		first := play()
		text := strings.Index(first, "first")
		if text < 0 {
			t.Fatalf("the reply's first frame lacks its text:\n%s", first)
		}
		for _, part := range side {
			if i := strings.Index(first, part); i < text {
				t.Errorf("%s did not follow the text of the reply's first frame (at %d, the text at %d)", part, i, text)
			}
		}
		// Only what changed: not the whole header, not the whole sidebar.
		for _, whole := range []string{`id="chat-header"`, `id="sidebar"`, `id="mode-switch"`, `id="yolo-switch"`} {
			if strings.Contains(first, whole) {
				t.Errorf("the reply's first frame sent all of %s, where only its title or a row changed", whole)
			}
		}
		if strings.Contains(first, "<b>count") || !strings.Contains(first, "&lt;b&gt;count") {
			t.Errorf("the chat's title, from its first message, is not escaped text:\n%s", first)
		}
		if !strings.Contains(first, `id="stop"`) {
			t.Error("the composer does not offer Stop while the run goes on")
		}
		if !v.paced {
			t.Error("the reply's first frame does not space the next")
		}
		if v.sideDirty() {
			t.Error("the reply's first frame left some of the rest for later")
		}

		close(model.end)
		end := play()
		if !strings.Contains(end, "status-complete") {
			t.Fatalf("the run's end did not complete the reply:\n%s", end)
		}
		if strings.Contains(end, `id="composer-actions"`) {
			t.Error("the run's end sent the composer's buttons with the reply's last frame")
		}
		if rest := frame(); !strings.Contains(rest, `id="send"`) {
			t.Errorf("the composer does not offer Send after the run:\n%s", rest)
		}

		// A new chat changes the sidebar's list: all of it goes.
		if _, err := rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: "another"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		v.take(threadSub.Drain(), listSub.Drain())
		if list := frame(); !strings.Contains(list, `id="sidebar"`) || !strings.Contains(list, "another") {
			t.Errorf("a new chat did not send the sidebar's list:\n%s", list)
		}

		// A run whose start and end come in one frame with a change of
		// the header (a rename): the usage beside Send, which is not in
		// the header, goes with them (it went only with frames that left
		// the header alone).
		if _, err := rt.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "again"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		renamed := "renamed"
		if _, err := rt.UpdateThread(ctx, th.ID, agentcore.ThreadPatch{Title: &renamed}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		v.take(threadSub.Drain(), listSub.Drain())
		var all strings.Builder
		for i := 0; v.dirty() && i < 5; i++ {
			all.WriteString(frame())
		}
		if got := all.String(); !strings.Contains(got, "3.7k in · 240 out") || !strings.Contains(got, "renamed") {
			t.Errorf("a run in one frame with a rename did not send the chat's usage and title:\n%s", got)
		}
	})
}
