package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// ToolSet is every tool the agent offers, by the name the model calls: its
// own tools, "agent-<key>" for sub-agents, "workflow-<key>" for workflows.
// The map is new on each call; the API lists and runs tools from it, so
// they are exactly the ones the model can call.
func (a *Agent) ToolSet() map[string]*Tool { return a.toolset() }

// toolset is ToolSet. An own tool wins a name clash.
func (a *Agent) toolset() map[string]*Tool {
	set := make(map[string]*Tool, len(a.Tools)+len(a.Agents)+len(a.Workflows))
	if a.ToolSource != nil {
		for k, t := range a.ToolSource() {
			set[k] = t
		}
	}
	for k, sub := range a.Agents {
		set["agent-"+k] = sub.asTool(k)
	}
	for k, w := range a.Workflows {
		set["workflow-"+k] = w.asTool(k)
	}
	for k, t := range a.Tools {
		set[k] = t
	}
	return set
}

var agentToolInput = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","minLength":1,"description":"The task for the agent, with everything it needs to know."}},"required":["prompt"],"additionalProperties":false}`)

// asTool makes a sub-agent callable as a tool: the prompt goes in, its
// answer comes out.
func (a *Agent) asTool(key string) *Tool {
	desc := a.Description
	if desc == "" {
		desc = fmt.Sprintf("Ask the agent %s to do a task and return its answer.", a.Name)
	}
	return &Tool{
		ID:           "agent-" + key,
		Description:  desc,
		InputSchema:  agentToolInput,
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Execute: func(ctx context.Context, input json.RawMessage, tc *ToolContext) (any, error) {
			var in struct {
				Prompt string `json:"prompt"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, err
			}
			res, err := a.Generate(ctx, []Message{{Role: RoleUser, Content: TextContent(in.Prompt)}},
				StreamOptions{ResourceID: tc.ResourceID, RequestContext: tc.RequestContext})
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w", a.ID, err)
			}
			return map[string]any{"text": res.Text}, nil
		},
	}
}

// Workflow is a named sequence of steps with input and output schemas: the
// output of each step is the input of the next.
type Workflow struct {
	ID           string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Steps        []WorkflowStep

	once    sync.Once
	schemas *Tool // validates input and output against the schemas
}

// WorkflowStep is one step of a workflow.
type WorkflowStep struct {
	ID      string
	Execute func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)
}

// Run runs the steps in order and returns the last step's output, checked
// against the output schema.
func (w *Workflow) Run(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
	w.once.Do(func() {
		w.schemas = &Tool{ID: "workflow-" + w.ID, InputSchema: w.InputSchema, OutputSchema: w.OutputSchema}
	})
	t := w.schemas
	if err := t.ValidateInput(input); err != nil {
		return nil, fmt.Errorf("workflow %s input: %w", w.ID, err)
	}
	cur := input
	for _, s := range w.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := s.Execute(ctx, cur)
		if err != nil {
			return nil, fmt.Errorf("workflow %s step %s: %w", w.ID, s.ID, err)
		}
		cur = out
	}
	if err := t.ValidateOutput(cur); err != nil {
		return nil, fmt.Errorf("workflow %s output: %w", w.ID, err)
	}
	return cur, nil
}

// asTool makes the workflow callable as a tool; its result is
// {runId, status, result}.
func (w *Workflow) asTool(key string) *Tool {
	desc := w.Description
	if desc == "" {
		desc = "Run the workflow " + w.ID + "."
	}
	return &Tool{
		ID:          "workflow-" + key,
		Description: desc,
		InputSchema: w.InputSchema, // the output schema is checked by Run
		Execute: func(ctx context.Context, input json.RawMessage, tc *ToolContext) (any, error) {
			out, err := w.Run(ctx, input)
			if err != nil {
				return nil, err
			}
			var result any
			if err := json.Unmarshal(out, &result); err != nil {
				return nil, fmt.Errorf("workflow %s: output is not JSON: %w", w.ID, err)
			}
			return map[string]any{"runId": NewID(), "status": "success", "result": result}, nil
		},
	}
}
