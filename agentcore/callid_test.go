package agentcore_test

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/hostile"
	"parley/agentcore/llm"
	"parley/agentcore/scripted"
)

// hostileCallIDs are tool call ids a hostile or broken provider could send:
// each breaks out of a JavaScript string, an HTML attribute, a script
// element or a URL path if used unescaped.
var hostileCallIDs = hostile.IDs()

// parleyID is what every call id Parley stores, publishes or shows must be.
var parleyID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// callIDOf is Parley's id for the call the provider named pid in msgs:
// tests script the provider's ids, Parley issues its own.
func callIDOf(t testing.TB, msgs []agentcore.Message, pid string) string {
	t.Helper()
	for _, m := range msgs {
		for _, p := range m.Content.Parts {
			if ti := p.ToolInvocation; ti != nil && ti.ProviderCallID == pid {
				return ti.ToolCallID
			}
		}
	}
	t.Fatalf("no call the provider named %q", pid)
	return ""
}

// eventCallIDOf is Parley's id for the call the provider named pid in
// events.
func eventCallIDOf(t testing.TB, events []agentcore.Event, pid string) string {
	t.Helper()
	for _, e := range events {
		if e.ProviderCallID == pid && e.ToolCallID != "" {
			return e.ToolCallID
		}
	}
	t.Fatalf("no call the provider named %q", pid)
	return ""
}

func echoTool() *agentcore.Tool {
	return &agentcore.Tool{ID: "echo", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, in json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			return "ok", nil
		}}
}

// safeCallIDs are tool call ids as real providers make them: safe
// anywhere, and still not Parley's.
var safeCallIDs = []string{"call_abc", "toolu_01"}

// A provider whose tool call ids are hostile, safe, repeat or are empty:
// every id stored and published is Parley's (valid, one per call, the same
// from the first input event to the result, never the provider's), and the
// next request to the provider carries the provider's own ids back, each
// call with its result.
func TestProviderCallIDsAreReissued(t *testing.T) {
	srv := scripted.NewServer()
	defer srv.Close()
	rt, closeRT := suspendRuntime(t, filepath.Join(t.TempDir(), "p.db"), srv)
	defer closeRT()
	rt.Agents()[0].Tools["echo"] = echoTool()
	th := thread(t, rt)

	providerIDs := append(append([]string{}, hostileCallIDs...), safeCallIDs...)
	var calls []scripted.ToolCall
	for _, id := range providerIDs {
		calls = append(calls, scripted.ToolCall{ID: id, Name: "echo", Args: `{"n":1}`})
	}
	calls = append(calls,
		scripted.ToolCall{ID: "dup", Name: "echo", Args: `{"n":2}`}, scripted.ToolCall{ID: "dup", Name: "echo", Args: `{"n":3}`},
		scripted.ToolCall{ID: "", Name: "echo", Args: `{"n":4}`})
	srv.Push(scripted.Reply{ToolCalls: calls, ExactIDs: true}, scripted.Reply{Text: "All done."})
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "go"}); err != nil {
		t.Fatal(err)
	}
	events := collect(t, sub)
	if last := events[len(events)-1]; last.Type != agentcore.EventFinish {
		t.Fatalf("the run ended with %s %q", last.Type, last.Error)
	}

	// Published: each call's id is Parley's from its first event on.
	started := map[string]bool{}
	var order []string
	for _, e := range events {
		if e.ToolCallID == "" {
			continue
		}
		if !parleyID.MatchString(e.ToolCallID) || len(e.ToolCallID) > agentcore.MaxIDLen {
			t.Fatalf("%s event published with call id %.40q", e.Type, e.ToolCallID)
		}
		switch e.Type {
		case agentcore.EventToolInputStart:
			if started[e.ToolCallID] {
				t.Fatalf("two calls published with id %s", e.ToolCallID)
			}
			started[e.ToolCallID] = true
			order = append(order, e.ToolCallID)
		default:
			if !started[e.ToolCallID] {
				t.Fatalf("%s event for call %s before its input start", e.Type, e.ToolCallID)
			}
		}
	}
	if len(order) != len(calls) {
		t.Fatalf("%d calls published, want %d", len(order), len(calls))
	}
	if n := len(find(events, agentcore.EventToolResult)); n != len(calls) {
		t.Fatalf("%d results published, want %d", n, len(calls))
	}

	// Stored: the same ids, and each call's own arguments.
	msgs, err := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var stored []*agentcore.ToolInvocation
	for _, p := range msgs[1].Content.Parts {
		if p.ToolInvocation != nil {
			stored = append(stored, p.ToolInvocation)
		}
	}
	if len(stored) != len(calls) {
		t.Fatalf("%d calls stored, want %d", len(stored), len(calls))
	}
	for i, ti := range stored {
		if ti.ToolCallID != order[i] || ti.State != "result" || string(ti.Args) != calls[i].Args {
			t.Fatalf("stored call %d: id %.40q state %s args %s; want id %s, a result, args %s", i, ti.ToolCallID, ti.State, ti.Args, order[i], calls[i].Args)
		}
	}
	// Even a safe provider id is not Parley's: it is kept only to go back.
	for i, id := range providerIDs {
		if order[i] == id || stored[i].ProviderCallID != id {
			t.Errorf("call %d: Parley's id %.40q, kept provider id %.40q; want an id of Parley's own and the provider's %.40q kept", i, order[i], stored[i].ProviderCallID, id)
		}
	}

	// Sent back: the provider's ids, in order, each result after its call.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var sentCalls, sentResults []string
	for _, m := range reqs[1].Messages {
		for _, tc := range m.ToolCalls {
			sentCalls = append(sentCalls, tc.ID)
		}
		if m.Role == "tool" {
			sentResults = append(sentResults, m.ToolCallID)
		}
	}
	if len(sentCalls) != len(calls) || len(sentResults) != len(calls) {
		t.Fatalf("the second request carries %d calls and %d results, want %d of each", len(sentCalls), len(sentResults), len(calls))
	}
	for i, id := range providerIDs {
		if sentCalls[i] != id || sentResults[i] != id {
			t.Errorf("call %d went back as %.40q with result %.40q, want the provider's %.40q", i, sentCalls[i], sentResults[i], id)
		}
	}
	// The repeated id goes back once; the second call with it goes back
	// under the id Parley gave it, and the call without an id under the one
	// the provider's adapter named it (which is not Parley's either).
	n := len(providerIDs)
	empty := stored[n+2].ProviderCallID
	if sentCalls[n] != "dup" || sentCalls[n+1] != order[n+1] || empty == "" || empty == order[n+2] || sentCalls[n+2] != empty {
		t.Errorf("the repeated and empty ids went back as %q %q %q; want dup %s and the adapter's id %q, not Parley's %s", sentCalls[n], sentCalls[n+1], sentCalls[n+2], order[n+1], empty, order[n+2])
	}
	if stored[n+1].ProviderCallID != "" {
		t.Errorf("the second call named dup keeps provider id %q; only the first may", stored[n+1].ProviderCallID)
	}
	for i := n; i < len(calls); i++ {
		if sentResults[i] != sentCalls[i] {
			t.Errorf("result %d went back as %q for call %q", i, sentResults[i], sentCalls[i])
		}
	}
}

// A question asked under a hostile provider id is answered by Parley's id,
// after a restart too, and the request that follows carries the
// provider's id back for the call and its result.
func TestResumedCallSendsProviderIDBack(t *testing.T) {
	srv := scripted.NewServer()
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "p.db")
	rt, closeRT := suspendRuntime(t, path, srv)
	th := thread(t, rt)
	bad := `q');fetch('/api/tools/execute_command/execute');('`
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: bad, Name: "ask", Args: `{"question":"Which port?"}`}}})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "deploy"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	pending, err := rt.Pending(t.Context(), th.ID)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	id := pending[0].ToolCallID
	if !agentcore.ValidID(id) {
		t.Fatalf("the question waits under call id %q", id)
	}
	closeRT()

	rt, closeRT = suspendRuntime(t, path, srv)
	defer closeRT()
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: bad, Data: json.RawMessage(`"8080"`)}); err == nil {
		t.Fatal("the provider's id answered the question; only Parley's may")
	}
	srv.Push(scripted.Reply{Text: "Deployed on 8080."})
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: id, Data: json.RawMessage(`"8080"`)}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	var call, result string
	for _, m := range last.Messages {
		if len(m.ToolCalls) > 0 {
			call = m.ToolCalls[0].ID
		}
		if m.Role == "tool" {
			result = m.ToolCallID
			if !strings.Contains(m.Content, "8080") {
				t.Fatalf("the result sent back is %q", m.Content)
			}
		}
	}
	if call != bad || result != bad {
		t.Fatalf("after the answer the call went back as %q with result %q, want the provider's %q", call, result, bad)
	}
}

// partsModel streams fixed parts, one list per model call.
type partsModel struct{ steps [][]llm.Part }

func (m *partsModel) Spec() string { return "test/parts" }

func (m *partsModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Part, error] {
	parts := []llm.Part{{Type: llm.PartTextDelta, Text: "Done."}, {Type: llm.PartFinish, FinishReason: "stop"}}
	if len(m.steps) > 0 {
		parts, m.steps = m.steps[0], m.steps[1:]
	}
	return func(yield func(llm.Part, error) bool) {
		for _, p := range parts {
			if !yield(p, nil) {
				return
			}
		}
	}
}

// streamedCall is one call as a provider streams it: input start, two
// argument deltas, input end, the complete call.
func streamedCall(id, name, args string) []llm.Part {
	return []llm.Part{
		{Type: llm.PartToolInputStart, ToolCallID: id, ToolName: name},
		{Type: llm.PartToolInputDelta, ToolCallID: id, Text: args[:1]},
		{Type: llm.PartToolInputDelta, ToolCallID: id, Text: args[1:]},
		{Type: llm.PartToolInputEnd, ToolCallID: id},
		{Type: llm.PartToolCall, ToolCallID: id, ToolName: name, Input: args},
	}
}

// Calls streamed one after another under an empty id, a repeated id and a
// 10 KB id, then a call whose input events interleave with another's under
// the same id (OpenAI's adapter closes the first before starting the
// second, and completes both at the end): each gets its own Parley id at
// its input start, its deltas and its call carry it, and its arguments are
// its own.
func TestStreamedCallIDs(t *testing.T) {
	long := strings.Repeat("y", 10<<10)
	var step []llm.Part
	step = append(step, streamedCall("", "echo", `{"n":1}`)...)
	step = append(step, streamedCall("", "echo", `{"n":2}`)...)
	step = append(step, streamedCall("same", "echo", `{"n":3}`)...)
	step = append(step, streamedCall("same", "echo", `{"n":4}`)...)
	step = append(step, streamedCall(long, "echo", `{"n":5}`)...)
	step = append(step,
		llm.Part{Type: llm.PartToolInputStart, ToolCallID: "x", ToolName: "echo"},
		llm.Part{Type: llm.PartToolInputDelta, ToolCallID: "x", Text: `{"n":6}`},
		llm.Part{Type: llm.PartToolInputEnd, ToolCallID: "x"},
		llm.Part{Type: llm.PartToolInputStart, ToolCallID: "x", ToolName: "echo"},
		llm.Part{Type: llm.PartToolInputDelta, ToolCallID: "x", Text: `{"n":7}`},
		llm.Part{Type: llm.PartToolInputEnd, ToolCallID: "x"},
		llm.Part{Type: llm.PartToolCall, ToolCallID: "x", ToolName: "echo", Input: `{"n":6}`},
		llm.Part{Type: llm.PartToolCall, ToolCallID: "x", ToolName: "echo", Input: `{"n":7}`},
		llm.Part{Type: llm.PartFinish, FinishReason: "tool-calls"})
	model := &partsModel{steps: [][]llm.Part{step}}
	a := &agentcore.Agent{ID: "a", Model: "test/parts", Tools: map[string]*agentcore.Tool{"echo": echoTool()},
		Log: slog.New(slog.DiscardHandler), Models: func(string) (llm.Model, error) { return model, nil }}
	events := collectRun(a, agentcore.StreamOptions{}, "go")

	args := map[string]string{} // Parley id → arguments streamed under it
	var ids []string
	for _, e := range events {
		switch e.Type {
		case agentcore.EventToolInputStart:
			if !agentcore.ValidID(e.ToolCallID) {
				t.Fatalf("input start published with id %.40q", e.ToolCallID)
			}
			if _, dup := args[e.ToolCallID]; dup {
				t.Fatalf("two calls started with id %s", e.ToolCallID)
			}
			args[e.ToolCallID] = ""
			ids = append(ids, e.ToolCallID)
		case agentcore.EventToolCallDelta:
			if _, ok := args[e.ToolCallID]; !ok {
				t.Fatalf("a delta for call %.40q, which never started", e.ToolCallID)
			}
			args[e.ToolCallID] += e.Text
		case agentcore.EventToolCall:
			if a := args[e.ToolCallID]; a != string(e.Args) {
				t.Fatalf("call %s streamed %s but completed with %s", e.ToolCallID, a, e.Args)
			}
		}
	}
	if len(ids) != 7 {
		t.Fatalf("%d calls started, want 7: %s", len(ids), types(events))
	}
	for i, id := range ids {
		want := `{"n":` + string(rune('1'+i)) + `}`
		if args[id] != want {
			t.Errorf("call %d (%s) has arguments %s, want %s", i, id, args[id], want)
		}
	}
	if n := len(find(events, agentcore.EventToolResult)); n != 7 {
		t.Fatalf("%d results, want 7", n)
	}
}
