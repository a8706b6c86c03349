package toolkit

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"parley/agentcore"
)

//go:embed ask_user.md
var askUserDescription string

// Selection modes of ask_user.
const (
	SingleSelect = "single_select"
	MultiSelect  = "multi_select"
)

// Skipped is the answer of a question the user skipped.
const Skipped = "(skipped)"

// AskOption is one choice of a question.
type AskOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// AskInput is ask_user's input.
type AskInput struct {
	Question      string      `json:"question"`
	Options       []AskOption `json:"options,omitempty"`
	SelectionMode string      `json:"selectionMode,omitempty"`
}

// AskPayload is what the user is shown while the run waits.
type AskPayload struct {
	Question      string      `json:"question"`
	Options       []AskOption `json:"options,omitempty"`
	SelectionMode string      `json:"selectionMode,omitempty"`
}

var (
	askInputSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"question":{"type":"string","minLength":1,"description":"The question to ask the user. Should be clear and specific."},` +
		`"options":{"type":"array","description":"Optional choices. If provided, shows a selection list. If omitted, shows a free-text input.","items":{"type":"object","properties":{"label":{"type":"string","description":"Short display text for this option (1-5 words)"},"description":{"type":"string","description":"Explanation of what this option means"}},"required":["label"],"additionalProperties":false}},` +
		`"selectionMode":{"type":"string","enum":["single_select","multi_select"],"description":"Controls how many provided options the user can select. Defaults to single_select when options are provided. Requires options."}` +
		`},"required":["question"],"additionalProperties":false}`)
	askSuspendSchema = json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"options":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"},"description":{"type":"string"}},"required":["label"]}},"selectionMode":{"type":"string","enum":["single_select","multi_select"]}},"required":["question"]}`)
	askResumeSchema  = json.RawMessage(`{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`)
)

// AskUserTool is Mastra's askUserTool (spec §1.1): it suspends the run with
// the question, and answers the model "User answered: …" once the user has.
func AskUserTool() *agentcore.Tool {
	return &agentcore.Tool{
		ID:            "ask_user",
		Description:   askUserDescription,
		InputSchema:   askInputSchema,
		SuspendSchema: askSuspendSchema,
		ResumeSchema:  askResumeSchema,
		ToModelOutput: resultToModel,
		// A chat message sent while the question is open answers it.
		ResumeFromMessage: func(text string) json.RawMessage {
			b, _ := json.Marshal(text)
			return b
		},
		Execute: func(ctx context.Context, raw json.RawMessage, tc *agentcore.ToolContext) (out any, err error) {
			defer func() {
				if p := recover(); p != nil {
					out, err = Result{Content: fmt.Sprintf("Failed to ask user: %v", p), IsError: true}, nil
				}
			}()
			var in AskInput
			if err := json.Unmarshal(raw, &in); err != nil {
				return Result{Content: "Failed to ask user: " + err.Error(), IsError: true}, nil
			}
			// Checked first, even on resume.
			if in.SelectionMode != "" && len(in.Options) == 0 {
				return Result{Content: "Failed to ask user: selectionMode requires options.", IsError: true}, nil
			}
			mode := ""
			if len(in.Options) > 0 {
				mode = cmpOr(in.SelectionMode, SingleSelect)
			}
			if tc.ResumeData != nil {
				answer, err := FormatAnswer(tc.ResumeData)
				if err != nil {
					return Result{Content: "Failed to ask user: " + err.Error(), IsError: true}, nil
				}
				return Result{Content: "User answered: " + answer}, nil
			}
			if tc.Suspendable {
				return nil, tc.Suspend(AskPayload{Question: in.Question, Options: in.Options, SelectionMode: mode})
			}
			text := "[Question for user]: " + in.Question
			if len(in.Options) > 0 {
				labels := make([]string, len(in.Options))
				for i, o := range in.Options {
					labels[i] = o.Label
				}
				text += "\nOptions: " + strings.Join(labels, ", ")
			}
			if mode != "" {
				text += "\nSelection mode: " + mode
			}
			return Result{Content: text}, nil
		},
	}
}

// FormatAnswer renders an answer (a string, or a list of labels joined with
// ", ") as Mastra's formatQuestionAnswer does.
func FormatAnswer(data json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		return s, nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err == nil {
		return strings.Join(list, ", "), nil
	}
	return "", errors.New("the answer must be a string or a list of strings")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
