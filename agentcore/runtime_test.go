package agentcore_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
	"parley/storage"
)

// newRuntime wires a runtime over a real SQLite store and the scripted model.
func newRuntime(t *testing.T) (*agentcore.Runtime, *scripted.Server) {
	t.Helper()
	rt, srv, _ := newRuntimeDB(t)
	return rt, srv
}

// newRuntimeDB is newRuntime that also returns its store.
func newRuntimeDB(t testing.TB) (*agentcore.Runtime, *scripted.Server, *storage.DB) {
	t.Helper()
	srv := scripted.NewServer()
	t.Cleanup(srv.Close)
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{
		BaseURLs: map[string]string{"openai-compatible": srv.URL()},
		APIKeys:  map[string]string{"openai-compatible": "k"},
		Getenv:   func(string) string { return "" }, MaxRetries: -1,
	}
	agent := &agentcore.Agent{
		ID: "a", Name: "A", Instructions: agentcore.Text("Be brief.", "Be kind."),
		Model:  "openai-compatible/test",
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
	}
	rt := agentcore.NewRuntime(db, nil, agent)
	t.Cleanup(func() { rt.Close(); db.Close() })
	return rt, srv, db
}

func thread(t *testing.T, rt *agentcore.Runtime) agentcore.Thread {
	t.Helper()
	th, err := rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// collect reads a subscription until its run's terminal event.
func collect(t *testing.T, sub *agentcore.Subscription) []agentcore.Event {
	t.Helper()
	var out []agentcore.Event
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-sub.Ready():
		case <-deadline:
			t.Fatalf("no terminal event; got %v", out)
		}
		for _, e := range sub.Drain() {
			out = append(out, e)
			if e.Terminal() {
				return out
			}
		}
	}
}

func TestSendStreamsStoresAndTitles(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: "Hello there, friend.", Usage: scripted.Usage{PromptTokens: 7, CompletionTokens: 4}})
	sub := rt.Subscribe(th.ID)
	defer sub.Close()

	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "  Say hello\nplease  "})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, sub)
	var text strings.Builder
	var types []agentcore.EventType
	for _, e := range events {
		if e.Type == agentcore.EventTextDelta {
			text.WriteString(e.Text)
		}
		if len(types) == 0 || types[len(types)-1] != e.Type {
			types = append(types, e.Type)
		}
	}
	want := []agentcore.EventType{agentcore.EventMessage, agentcore.EventThread, agentcore.EventMessage, agentcore.EventStart, agentcore.EventStepStart, agentcore.EventTextDelta, agentcore.EventStepFinish, agentcore.EventFinish}
	if strings.Join(typeNames(types), ",") != strings.Join(typeNames(want), ",") {
		t.Fatalf("events %v, want %v", types, want)
	}
	if text.String() != "Hello there, friend." {
		t.Fatalf("streamed %q", text.String())
	}
	fin := events[len(events)-1]
	if fin.Usage.InputTokens != 7 || fin.Usage.OutputTokens != 4 || fin.RunID != sent.Run.ID {
		t.Fatalf("finish = %+v", fin)
	}

	msgs, err := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Content.Text() != "Say hello\nplease" || msgs[1].Content.Text() != "Hello there, friend." || msgs[1].Status != agentcore.StatusComplete {
		t.Fatalf("stored %+v", msgs)
	}
	got, _ := rt.GetThread(t.Context(), th.ID)
	if got.Title != "Say hello" {
		t.Fatalf("title %q", got.Title)
	}
	run, err := rt.GetRun(t.Context(), sent.Run.ID)
	if err != nil || run.Status != agentcore.RunDone || run.Usage.OutputTokens != 4 {
		t.Fatalf("run %+v, %v", run, err)
	}
	// The model saw the instructions as system messages, then the user.
	req := srv.Requests()[0]
	if len(req.Messages) != 3 || req.Messages[0].Role != "system" || req.Messages[1].Role != "system" || req.Messages[2].Role != "user" {
		t.Fatalf("prompt %+v", req.Messages)
	}
}

func typeNames(ts []agentcore.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// While a reply streams, the store holds it (flushed about every 50 ms), so a
// crash loses at most the last few deltas.
func TestStreamingReplyIsFlushedWhileItStreams(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: strings.Repeat("tick ", 60), Delay: 10 * time.Millisecond})
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		m, err := rt.GetMessage(t.Context(), sent.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == agentcore.StatusStreaming && len(m.Content.Text()) > 20 {
			rt.Stop(t.Context(), th.ID)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the streaming reply never reached the store before it finished")
}

func TestStopKeepsPartialAndFreesThread(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Text: strings.Repeat("word ", 500), Delay: 5 * time.Millisecond})
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "again"}); err != agentcore.ErrBusy {
		t.Fatalf("second send while running: %v, want ErrBusy", err)
	}
	for {
		if l, ok := rt.Live(th.ID); ok && len(l.Content.Text()) > 25 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !rt.Stop(t.Context(), th.ID) {
		t.Fatal("Stop found no run")
	}
	m, _ := rt.GetMessage(t.Context(), sent.MessageID)
	if m.Status != agentcore.StatusInterrupted || m.Content.Metadata["stopped"] != "user" || len(m.Content.Text()) < 25 {
		t.Fatalf("after stop: %s %v %q", m.Status, m.Content.Metadata, m.Content.Text())
	}
	if _, ok := rt.Live(th.ID); ok {
		t.Fatal("thread still has a live run")
	}
	run, _ := rt.GetRun(t.Context(), sent.Run.ID)
	if run.Status != agentcore.RunStopped {
		t.Fatalf("run status %s", run.Status)
	}
	srv.Push(scripted.Reply{Text: "ok"})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "again"}); err != nil {
		t.Fatalf("send after stop: %v", err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	// The stopped partial reply is part of the history the model sees.
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if n := len(last.Messages); n != 5 || last.Messages[3].Role != "assistant" {
		t.Fatalf("history %+v", last.Messages)
	}
}

func TestProviderErrorIsStoredAndThreadUsable(t *testing.T) {
	rt, srv := newRuntime(t)
	th := thread(t, rt)
	srv.Push(scripted.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`})
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	sent, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, sub)
	last := events[len(events)-1]
	if last.Type != agentcore.EventError || !strings.Contains(last.Error, "Incorrect API key provided") {
		t.Fatalf("terminal %+v", last)
	}
	m, _ := rt.GetMessage(t.Context(), sent.MessageID)
	if m.Status != agentcore.StatusError || !strings.Contains(m.Content.Metadata["error"].(string), "Incorrect API key") {
		t.Fatalf("stored %s %v", m.Status, m.Content.Metadata)
	}
	srv.Push(scripted.Reply{Text: "fine"})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "again"}); err != nil {
		t.Fatal(err)
	}
}

func TestSendRejectsBadInput(t *testing.T) {
	rt, _ := newRuntime(t)
	th := thread(t, rt)
	cases := map[string]agentcore.SendRequest{
		"empty":          {ThreadID: th.ID, Text: "  \n "},
		"unknown thread": {ThreadID: "nope", Text: "hi"},
		"unknown agent":  {ThreadID: th.ID, AgentID: "nope", Text: "hi"},
	}
	for name, req := range cases {
		if _, err := rt.Send(t.Context(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestGenerateCollectsText(t *testing.T) {
	rt, srv := newRuntime(t)
	srv.Push(scripted.Reply{Text: "forty-two"})
	a, _ := rt.Agent("")
	res, err := a.Generate(context.Background(), []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("q")}}, agentcore.StreamOptions{})
	if err != nil || res.Text != "forty-two" || res.FinishReason != "stop" {
		t.Fatalf("generate = %+v, %v", res, err)
	}
}

func TestInstructionsAcceptMastraShapes(t *testing.T) {
	for _, in := range []string{`"one"`, `["one","two"]`, `[{"role":"system","content":"one"},"two"]`} {
		var got agentcore.Instructions
		if err := got.UnmarshalJSON([]byte(in)); err != nil || got[0].Content != "one" {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	var bad agentcore.Instructions
	if err := bad.UnmarshalJSON([]byte(`[{"role":"user","content":"x"}]`)); err == nil {
		t.Error("a user message was accepted as instructions")
	}
}

// stuckTool gives the runtime's agent the tool "stuck", which ignores its
// cancellation: it returns only once release is closed. The channel it
// returns closes when the tool starts.
func stuckTool(rt *agentcore.Runtime, release <-chan struct{}) <-chan struct{} {
	started := make(chan struct{})
	rt.Agents()[0].Tools = map[string]*agentcore.Tool{"stuck": {ID: "stuck", Description: "ignores cancellation",
		Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) {
			close(started)
			<-release // not ctx.Done(): this tool does not listen
			return "late", nil
		}}}
	return started
}

// Once Close has begun nothing new starts (ErrClosed), and a run whose tool
// ignores its cancellation keeps Close waiting no longer than the grace.
func TestCloseRefusesNewRunsAndIsBounded(t *testing.T) {
	rt, srv := newRuntime(t)
	rt.CloseGrace = 200 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	started := stuckTool(rt, release)
	busy, idle := thread(t, rt), thread(t, rt)
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "s1", Name: "stuck", Args: `{}`}}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: busy.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool never ran")
	}
	closed := make(chan struct{})
	go func() { rt.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for a run whose tool ignores cancellation")
	}
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: idle.ID, Text: "too late"}); !errors.Is(err, agentcore.ErrClosed) {
		t.Fatalf("send after Close: %v, want ErrClosed", err)
	}
	if ms, _ := rt.ListMessages(t.Context(), idle.ID, agentcore.MessageQuery{}); len(ms) != 0 {
		t.Fatalf("a refused send stored %d messages", len(ms))
	}
}

// Stop returns when its context ends even if the run has not wound down.
func TestStopWaitsNoLongerThanItsContext(t *testing.T) {
	rt, srv := newRuntime(t)
	release := make(chan struct{})
	started := stuckTool(rt, release)
	th := thread(t, rt)
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "s1", Name: "stuck", Args: `{}`}}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if !rt.Stop(ctx, th.ID) || ctx.Err() == nil {
		t.Fatalf("Stop returned before its context ended (%v) while the tool still held the run", ctx.Err())
	}
	if err := rt.DeleteThread(ctx, th.ID); err == nil || !strings.Contains(err.Error(), "has not ended yet") {
		t.Fatalf("delete while the stopped run winds down: %v", err)
	}
	close(release)
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	if err := rt.DeleteThread(t.Context(), th.ID); err != nil {
		t.Fatalf("delete once the run ended: %v", err)
	}
}
