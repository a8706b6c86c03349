package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"parley/agentcore"
)

// WorkspaceKey is the request-context key naming the workspace folder of a
// run (a thread's own, when it has one).
const WorkspaceKey = "workspace"

// Workspaces opens workspaces by root, once each, with a default for runs
// that name none.
type Workspaces struct {
	Default *Workspace

	mu   sync.Mutex
	open map[string]*Workspace
}

// For is the workspace a tool call works in.
func (w *Workspaces) For(tc *agentcore.ToolContext) (*Workspace, error) {
	root, _ := tc.RequestContext[WorkspaceKey].(string)
	if root == "" || root == w.Default.Root() {
		return w.Default, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ws := w.open[root]; ws != nil {
		return ws, nil
	}
	ws, err := NewWorkspace(root)
	if err != nil {
		return nil, fmt.Errorf("the chat's workspace %s cannot be used: %w", root, err)
	}
	if w.open == nil {
		w.open = map[string]*Workspace{}
	}
	w.open[root] = ws
	return ws, nil
}

// PerThread makes a tool that works in each call's own workspace: build
// makes the tool for one workspace (once per workspace); the returned tool
// has its schemas and description and runs the one for the call's
// workspace.
func PerThread(ws *Workspaces, build func(*Workspace) *agentcore.Tool) *agentcore.Tool {
	proto := build(ws.Default)
	var mu sync.Mutex
	built := map[*Workspace]*agentcore.Tool{ws.Default: proto}
	return proto.WithExecute(
		func(ctx context.Context, input json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			w, err := ws.For(tc)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			t := built[w]
			if t == nil {
				t = build(w)
				built[w] = t
			}
			mu.Unlock()
			return t.Execute(ctx, input, tc)
		})
}
