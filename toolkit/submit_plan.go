package toolkit

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"parley/agentcore"
)

//go:embed submit_plan.md
var submitPlanDescription string

// PlansDir is where plans live in the workspace (Mastra Code's
// .mastracode/plans).
const PlansDir = ".parley/plans"

// Plan decisions.
const (
	PlanApproved = "approved"
	PlanRejected = "rejected"
)

// PlanPayload is what the user reviews while the run waits.
type PlanPayload struct {
	Path  string `json:"path"`
	Title string `json:"title,omitempty"`
	Plan  string `json:"plan,omitempty"`
}

// PlanDecision is the user's answer to a plan.
type PlanDecision struct {
	Action   string `json:"action"`
	Feedback string `json:"feedback,omitempty"`
	Path     string `json:"path,omitempty"`
	Title    string `json:"title,omitempty"`
	Plan     string `json:"plan,omitempty"`
}

// PlanResult is submit_plan's answer to the model after a decision.
type PlanResult struct {
	Content       string        `json:"content"`
	IsError       bool          `json:"isError"`
	SubmittedPlan SubmittedPlan `json:"submittedPlan"`
}

// SubmittedPlan echoes the decided plan, with its action so hosts need no
// string matching (Mastra PR #19069).
type SubmittedPlan struct {
	Title    string `json:"title"`
	Path     string `json:"path"`
	Plan     string `json:"plan"`
	Action   string `json:"action"`
	Feedback string `json:"feedback,omitempty"`
}

var (
	planInputSchema   = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path to the plan markdown file on disk (e.g. ` + "`.parley/plans/add-dark-mode.md`" + `)."}},"required":["path"],"additionalProperties":false}`)
	planSuspendSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"title":{"type":"string"},"plan":{"type":"string"}},"required":["path"]}`)
	planResumeSchema  = json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["approved","rejected"]},"feedback":{"type":"string"},"path":{"type":"string"},"title":{"type":"string"},"plan":{"type":"string"}},"required":["action"]}`)
)

// SubmitPlanTool is Mastra's path-based submitPlanTool (spec §1.2) with the
// plans in root/.parley/plans. The tool never switches modes; the host does
// on approval.
func SubmitPlanTool(root string) *agentcore.Tool {
	return &agentcore.Tool{
		ID:            "submit_plan",
		Description:   submitPlanDescription,
		InputSchema:   planInputSchema,
		SuspendSchema: planSuspendSchema,
		ResumeSchema:  planResumeSchema,
		// A chat message sent while the plan waits asks for changes.
		ResumeFromMessage: func(text string) json.RawMessage {
			b, _ := json.Marshal(PlanDecision{Action: PlanRejected, Feedback: text})
			return b
		},
		ToModelOutput: planToModel,
		Execute: func(ctx context.Context, raw json.RawMessage, tc *agentcore.ToolContext) (out any, err error) {
			defer func() {
				if p := recover(); p != nil {
					out, err = Result{Content: fmt.Sprintf("Failed to submit plan: %v", p), IsError: true}, nil
				}
			}()
			var in struct {
				Path string `json:"path"`
			}
			if err := json.Unmarshal(raw, &in); err != nil {
				return Result{Content: "Failed to submit plan: " + err.Error(), IsError: true}, nil
			}
			if tc.ResumeData != nil {
				var d PlanDecision
				if err := json.Unmarshal(tc.ResumeData, &d); err != nil {
					return Result{Content: "Failed to submit plan: " + err.Error(), IsError: true}, nil
				}
				return PlanResult{Content: planOutcome(d), SubmittedPlan: SubmittedPlan{Title: d.Title, Path: d.Path, Plan: d.Plan, Action: d.Action, Feedback: d.Feedback}}, nil
			}
			if tc.Suspendable {
				ws, err := NewWorkspace(root)
				if err != nil {
					return Result{Content: "Failed to submit plan: " + err.Error(), IsError: true}, nil
				}
				plan, err := ReadPlan(ctx, ws, in.Path)
				if err != nil {
					return Result{Content: "Failed to submit plan: " + err.Error(), IsError: true}, nil
				}
				return nil, tc.Suspend(plan)
			}
			return Result{Content: "[Plan submitted for review]\n\nPath: " + in.Path}, nil
		},
	}
}

// planOutcome is the model-facing text of a decision.
func planOutcome(d PlanDecision) string {
	switch {
	case d.Action == PlanApproved:
		return "Plan approved. Proceed with implementation following the approved plan."
	case strings.TrimSpace(d.Feedback) != "":
		return "Plan was not approved. The user wants revisions.\n\nUser feedback: " + d.Feedback + "\n\nPlease revise the plan based on the feedback and submit again with submit_plan."
	default:
		return "Plan was not approved. The user will send revision instructions in their next message. Stop now and wait for the user to provide feedback before revising the plan."
	}
}

// ReadPlan reads a plan file for review. path (absolute or relative to the
// root) is resolved like every path a tool reads: one that leaves the
// workspace (through a link too, a linked .parley/plans included) is an
// error, and so is a plan that is not a regular file (a FIFO would block
// the read for ever). Then, as Mastra does, the payload is {path, title,
// plan} when the resolved path is a readable .md file directly in
// .parley/plans, else just {path} (the reviewer is shown the path).
func ReadPlan(ctx context.Context, ws *Workspace, path string) (PlanPayload, error) {
	abs, err := ws.Resolve(path)
	if err != nil {
		return PlanPayload{}, err
	}
	if PlanFilesOnly(ws.Rel(abs)) != nil {
		return PlanPayload{Path: path}, nil
	}
	data, _, err := readHead(ctx, abs)
	switch {
	case isNotRegular(err):
		return PlanPayload{}, fmt.Errorf("plan %q %w; write the plan as a regular markdown file", path, err)
	case ctx.Err() != nil:
		return PlanPayload{}, ctx.Err()
	case err != nil:
		return PlanPayload{Path: path}, nil
	}
	title, plan := parsePlan(string(data))
	return PlanPayload{Path: path, Title: title, Plan: plan}, nil
}

var lineBreak = regexp.MustCompile(`\r?\n`)

// parsePlan splits a plan file into its "# " title and the rest.
func parsePlan(raw string) (title, plan string) {
	lines := lineBreak.Split(raw, -1)
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "# ") {
			rest := strings.TrimLeft(strings.Join(lines[i+1:], "\n"), "\n")
			return strings.TrimSpace(l[2:]), strings.TrimRight(rest, " \t\r\n")
		}
		break
	}
	return "", strings.TrimRight(raw, " \t\r\n")
}

// planModelResult is the result the model reads, as Mastra 1.71 sends it:
// the resume data's plan fields echoed when given, no action, and the
// tool's id.
type planModelResult struct {
	Content       string   `json:"content"`
	IsError       bool     `json:"isError"`
	SubmittedPlan planEcho `json:"submittedPlan"`
	ToolID        string   `json:"toolId"`
}

type planEcho struct {
	Title    string `json:"title,omitempty"`
	Path     string `json:"path,omitempty"`
	Plan     string `json:"plan,omitempty"`
	Feedback string `json:"feedback,omitempty"`
}

func planToModel(out any) agentcore.ModelOutput {
	r, ok := out.(PlanResult)
	if !ok {
		return resultToModel(out)
	}
	p := r.SubmittedPlan
	return agentcore.ModelOutput{Type: "json", Value: planModelResult{
		Content: r.Content, IsError: r.IsError, ToolID: "submit_plan",
		SubmittedPlan: planEcho{Title: p.Title, Path: p.Path, Plan: p.Plan, Feedback: p.Feedback},
	}}
}
