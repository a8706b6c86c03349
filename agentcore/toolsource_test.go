package agentcore_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// A tool source is asked on every run: tools it adds between runs are
// offered and run, tools it drops are gone, and an own tool wins a clash.
func TestToolSourceChangesBetweenRuns(t *testing.T) {
	echo := func(out string) *agentcore.Tool {
		return &agentcore.Tool{
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Execute: func(context.Context, json.RawMessage, *agentcore.ToolContext) (any, error) {
				return out, nil
			},
		}
	}
	var mu sync.Mutex
	dynamic := map[string]*agentcore.Tool{}
	a, srv := newAgent(t, map[string]*agentcore.Tool{"own": echo("own tool")})
	a.ToolSource = func() map[string]*agentcore.Tool {
		mu.Lock()
		defer mu.Unlock()
		return dynamic
	}
	set := func(m map[string]*agentcore.Tool) {
		mu.Lock()
		defer mu.Unlock()
		dynamic = m
	}
	offered := func(i int) []string {
		var names []string
		for _, tl := range srv.Requests()[i].Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		return names
	}

	srv.Push(scripted.Reply{Text: "no tools yet"})
	collectRun(a, agentcore.StreamOptions{}, "hi")
	if got := offered(0); !slices.Equal(got, []string{"own"}) {
		t.Fatalf("first run offered %v", got)
	}

	set(map[string]*agentcore.Tool{"srv_lookup": echo("from the source"), "own": echo("shadowed")})
	srv.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "srv_lookup", Args: `{}`}, {ID: "c2", Name: "own", Args: `{}`}}},
		scripted.Reply{Text: "done"})
	events := collectRun(a, agentcore.StreamOptions{}, "use it")
	if got := offered(1); !slices.Equal(got, []string{"own", "srv_lookup"}) {
		t.Fatalf("second run offered %v", got)
	}
	results := map[string]string{}
	for _, e := range find(events, agentcore.EventToolResult) {
		results[e.ToolName] = string(e.Result)
	}
	if results["srv_lookup"] != `"from the source"` || results["own"] != `"own tool"` {
		t.Fatalf("results %v", results)
	}

	set(nil)
	srv.Push(scripted.Reply{Text: "gone"})
	collectRun(a, agentcore.StreamOptions{}, "again")
	if got := offered(3); !slices.Equal(got, []string{"own"}) {
		t.Fatalf("after the source dropped its tool, offered %v", got)
	}
	if _, ok := a.ToolSet()["srv_lookup"]; ok {
		t.Fatal("ToolSet still lists a dropped tool")
	}
}
