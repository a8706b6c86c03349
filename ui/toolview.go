package ui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"parley/agentcore"
	"parley/agentcore/partialjson"
	"parley/app/chat"
	"parley/components"
	"parley/toolkit"
	"parley/ui/markdown"
)

const (
	// fieldPreview bounds one argument's value in a card; a card is a
	// preview, and a 1 MB file write must not be a 1 MB DOM node per frame.
	fieldPreview = 4000
	// resultPreview bounds a result shown in a card.
	resultPreview = 8000
)

// replyParts renders an assistant reply's parts: text as markdown, tool
// calls as cards. partial gives the live argument preview of calls still
// being written (nil: none).
func replyParts(threadID string, c agentcore.Content, prev *argPreview) []components.Part {
	pieces := replyPieces(threadID, c, prev)
	out := make([]components.Part, len(pieces))
	for i, p := range pieces {
		out[i] = p.view
		if p.kind == pieceText {
			out[i].HTML = markdown.Render(p.text)
		}
	}
	return out
}

// A piece is one part of a reply as the page shows it: its text still
// Markdown, so that a reply being written can render it in pieces
// (liveReply), everything else ready to render.
type piece struct {
	kind string
	key  string // what identifies it across frames: the call id of a card
	text string // pieceText: the Markdown
	view components.Part
}

const (
	pieceText      = "text"
	pieceReasoning = "reasoning"
	pieceSource    = "source"
	pieceTool      = "tool"
)

func replyPieces(threadID string, c agentcore.Content, prev *argPreview) []piece {
	var out []piece
	for _, p := range c.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, piece{kind: pieceText, text: p.Text})
			}
		case "reasoning":
			if p.Text != "" {
				out = append(out, piece{kind: pieceReasoning, view: components.Part{Reasoning: p.Text}})
			}
		case "source":
			if p.Source != nil && p.Source.URL != "" {
				title := cmp.Or(p.Source.Title, p.Source.URL)
				link := "[" + strings.NewReplacer("[", "\\[", "]", "\\]").Replace(title) + "](<" + p.Source.URL + ">)"
				out = append(out, piece{kind: pieceSource, view: components.Part{HTML: `<div class="source">` + markdown.Render("Source: "+link) + `</div>`}})
			}
		case "tool-invocation":
			if p.ToolInvocation != nil {
				card := toolCard(p.ToolInvocation, prev)
				card.ThreadID = threadID
				out = append(out, piece{kind: pieceTool, key: card.CallID, view: components.Part{Tool: card}})
			}
		}
	}
	return out
}

// toolCard is the card of one call. Display transforms win over raw
// payloads: a suppressed input shows a note, a transformed one its stand-in.
func toolCard(ti *agentcore.ToolInvocation, prev *argPreview) *components.ToolCard {
	card := &components.ToolCard{CallID: ti.ToolCallID, Name: ti.ToolName, Progress: clip(ti.Progress, resultPreview)}
	display := ti.Transforms[agentcore.TargetDisplay]
	switch ti.State {
	case "partial-call":
		card.State = "input-streaming"
		if ti.Cancelled {
			card.State = "error"
		}
	case "call":
		card.State = "running"
	case "suspended":
		card.State = "suspended"
	default:
		card.State = "done"
		if ti.IsError {
			card.State = "error"
		}
	}
	// shown are the arguments as the page may show them: a display
	// transform's stand-in, else the call's own (nil while written).
	var shown json.RawMessage
	argsHidden := false
	switch {
	case display != nil && hasPhase(display, agentcore.PhaseInputAvailable):
		shown = mustJSON(display[agentcore.PhaseInputAvailable].Transformed)
		card.Args = fields(shown)
	case ti.State == "partial-call":
		if _, hidden := display[agentcore.PhaseInputDelta]; hidden {
			// A display transform governs the deltas: fail closed.
			card.ArgsNote = "Arguments hidden while they are written."
			argsHidden = true
		} else if prev != nil {
			card.Args = prev.fields(ti)
		}
	default:
		shown = ti.Args
		card.Args = fields(shown)
	}
	var st *argParser
	if ti.State == "partial-call" && prev != nil {
		st = prev.parsers[ti.ToolCallID]
	}
	var titleArgs args
	switch {
	case argsHidden:
	case shown != nil:
		var f finalArgs
		_ = json.Unmarshal(shown, &f)
		titleArgs = f
	case st != nil:
		titleArgs = liveArgs{st}
	}
	card.Title, card.TitleCode = cardTitle(ti.ToolName, card.State, titleArgs, ti.Result)
	builtin := builtinTools[ti.ToolName]
	if card.Preview = preview(ti, st); card.Preview != nil {
		kept := card.Args[:0:0]
		for _, f := range card.Args {
			if !previewKeys[f.Key] {
				kept = append(kept, f)
			}
		}
		card.Args = kept
		card.Brief = firstLine(cmp.Or(card.Preview.Path, card.Preview.Command, card.Preview.Pattern), 120)
	} else if len(card.Args) > 0 {
		card.Brief = firstLine(card.Args[0].Value, 120)
	}
	if builtin {
		// The title says what the call acts on; the body shows the rest.
		card.Args = nil
		if card.TitleCode != "" || card.Preview != nil {
			card.Brief = ""
		}
	}
	switch ti.ToolName {
	case "task_write", "task_update", "task_complete", "task_check":
		card.Brief = ""
		if ti.State == "partial-call" {
			if st != nil && !argsHidden {
				if v, ok := st.p.Lookup("tasks"); ok {
					card.Tasks = taskViews(chat.PartialTasks(v))
				}
			}
		} else if !argsHidden {
			card.Tasks = cardTasks(shown, ti.Result)
		}
		if ti.ToolName == "task_write" && ti.State != "partial-call" {
			var in struct {
				Tasks []json.RawMessage `json:"tasks"`
			}
			if json.Unmarshal(shown, &in) == nil && in.Tasks != nil {
				card.Brief = fmt.Sprintf("%d tasks", len(in.Tasks))
			}
		}
	case "web_fetch", "web_search":
		card.Brief = ""
	}
	if ti.Approval {
		card.Approval = approvalView(ti)
	} else if ti.ToolName == "submit_plan" {
		card.Plan = planReview(ti)
	} else if q := question(ti); q != nil {
		card.Question = q
		card.Answer = answerText(ti.ResumeData)
	}
	if ti.State == "result" {
		phase := agentcore.PhaseOutput
		if ti.IsError {
			phase = agentcore.PhaseError
		}
		payload := ti.Result
		if r, ok := display[phase]; ok {
			payload = mustJSON(r.Transformed)
		}
		if ti.IsError {
			card.Error = clip(pretty(payload), resultPreview)
			if ti.Cancelled {
				card.Error = "Stopped: " + card.Error
			}
		} else if text, ok := resultBody(ti.ToolName, payload); ok {
			card.Result = text
			if ti.ToolName == "execute_command" {
				card.Progress = "" // the output says it all, and in order
			}
		} else {
			card.Result = clip(plainResult(payload), resultPreview)
		}
		card.Details = details(shown, payload)
	} else if ti.State != "partial-call" {
		card.Details = details(shown, nil)
	}
	if ti.ToolName == toolkit.UpdateWorkingMemoryName && !ti.Approval {
		memoryCard(card, ti)
	}
	return card
}

// memoryCard makes an updateWorkingMemory call the chat's small "Memory
// updated" line; opened, it shows the change, old → new, as a diff (text
// only: the document never becomes markup).
func memoryCard(card *components.ToolCard, ti *agentcore.ToolInvocation) {
	card.Args, card.Brief, card.Result, card.Details, card.TitleCode = nil, "", "", nil, ""
	card.Preview = nil
	switch card.State {
	case "input-streaming", "running":
		card.Title = "Updating memory…"
		return
	case "error":
		card.Title = "Memory not updated"
		return
	}
	var r toolkit.WorkingMemoryResult
	_ = json.Unmarshal(ti.Result, &r)
	if !r.Success {
		card.Title = "Memory not updated"
		card.Result = r.Message
		return
	}
	card.Title = "Memory updated"
	p := &components.Preview{}
	p.Diff, p.DiffNote = unifiedDiff(r.Before, r.After, maxDiffLines)
	if r.Before == "" {
		p.DiffNote = cmp.Or(p.DiffNote, "The first working memory.")
	}
	if len(p.Diff) == 0 {
		p.DiffNote = "No change: the same document again."
	}
	card.Preview = p
}

func hasPhase(m map[string]agentcore.TransformResult, phase string) bool {
	_, ok := m[phase]
	return ok
}

// fields lists a JSON object's top-level members in document order.
func fields(raw json.RawMessage) []components.Field {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			return nil
		}
		return []components.Field{{Key: "input", Value: clip(pretty(raw), fieldPreview)}}
	}
	var out []components.Field
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		out = append(out, components.Field{Key: fmt.Sprint(k), Value: clip(valueText(v), fieldPreview)})
	}
	return out
}

// valueText shows a string as itself and anything else as compact JSON.
func valueText(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s
	}
	return string(v)
}

// pretty indents JSON; a JSON string is shown as its text.
func pretty(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// clip shortens s to about n bytes on a rune boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes)", len(s)-cut)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// argPreview parses the arguments of calls still being written, one
// incremental parser per call, fed only what arrived since the last frame:
// total parsing work stays linear in the argument bytes.
type argPreview struct {
	parsers map[string]*argParser
}

type argParser struct {
	p   *partialjson.Parser
	fed int
	err error
	// counted and lines: newlines of "content" seen so far (write_file's
	// line count, kept incrementally).
	counted, lines int
}

// fields is the preview of a partial call's arguments so far.
func (a *argPreview) fields(ti *agentcore.ToolInvocation) []components.Field {
	if a.parsers == nil {
		a.parsers = map[string]*argParser{}
	}
	st := a.parsers[ti.ToolCallID]
	if st == nil || len(ti.ArgsText) < st.fed {
		st = &argParser{p: partialjson.New()}
		a.parsers[ti.ToolCallID] = st
	}
	if st.err == nil && len(ti.ArgsText) > st.fed {
		_, st.err = st.p.WriteString(ti.ArgsText[st.fed:])
		st.fed = len(ti.ArgsText)
	}
	var out []components.Field
	for _, k := range st.p.Keys() {
		if s, ok := st.p.String(k); ok {
			out = append(out, components.Field{Key: k, Value: tail(s, fieldPreview)})
			continue
		}
		v, ok := st.p.Lookup(k)
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		out = append(out, components.Field{Key: k, Value: tail(string(b), fieldPreview)})
	}
	if st.err != nil {
		out = append(out, components.Field{Key: "…", Value: "the arguments so far are not valid JSON"})
	}
	return out
}

// tail keeps the end of s: while a call is written, the newest text is what
// matters.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && !utf8RuneStart(s[cut]) {
		cut++
	}
	return fmt.Sprintf("… (%d bytes above)\n", cut) + s[cut:]
}

// question is the question a suspended (or answered) call asked, when its
// payload has one: ask_user's {question, options, selectionMode}.
func question(ti *agentcore.ToolInvocation) *components.Question {
	q, ok := chat.QuestionOf(ti)
	if !ok {
		return nil
	}
	return &components.Question{Text: q.Text, Multi: q.Multi, Options: optionViews(q.Options)}
}

// optionViews are the answers a question offers, as shown.
func optionViews(opts []chat.Option) []components.Option {
	var out []components.Option
	for _, o := range opts {
		out = append(out, components.Option{Label: o.Label, Description: o.Description})
	}
	return out
}

// answerText shows an answer: a string, or labels joined with ", ".
func answerText(data json.RawMessage) string {
	var s string
	if json.Unmarshal(data, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(data, &list) == nil {
		return strings.Join(list, ", ")
	}
	return ""
}

// firstLine is the first line of s, cut to about n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// planReview is a submit_plan call's plan and the user's decision.
func planReview(ti *agentcore.ToolInvocation) *components.PlanReview {
	var p struct{ Path, Title, Plan string }
	if len(ti.SuspendPayload) == 0 || json.Unmarshal(ti.SuspendPayload, &p) != nil {
		return nil // still being written: the card shows its arguments
	}
	r := &components.PlanReview{Title: p.Title, Path: p.Path}
	if p.Plan != "" {
		r.HTML = markdown.Render(p.Plan)
	}
	var d struct{ Action, Feedback string }
	if json.Unmarshal(ti.ResumeData, &d) == nil {
		r.Decision, r.Feedback = d.Action, d.Feedback
	}
	return r
}

// streamingTasks is the list a task_write call is still writing, from its
// partial arguments: the panel fills while the model types. The task being
// written last may be cut short; that is what the model has typed so far.
func streamingTasks(c agentcore.Content, prev *argPreview) ([]components.Task, bool) {
	for i := len(c.Parts) - 1; i >= 0; i-- {
		ti := c.Parts[i].ToolInvocation
		if ti == nil || ti.ToolName != "task_write" || ti.State != "partial-call" {
			continue
		}
		prev.fields(ti) // feeds the call's parser the new bytes
		st := prev.parsers[ti.ToolCallID]
		v, ok := st.p.Lookup("tasks")
		if !ok {
			return nil, false
		}
		return taskViews(chat.PartialTasks(v)), true
	}
	return nil, false
}

// approvalView is what an approval-gated call asks, and the decision.
func approvalView(ti *agentcore.ToolInvocation) *components.ApprovalView {
	var p struct {
		Payload struct {
			Category string `json:"category"`
			Prefix   string `json:"prefix"`
		} `json:"payload"`
	}
	_ = json.Unmarshal(ti.SuspendPayload, &p)
	v := &components.ApprovalView{Category: cmp.Or(p.Payload.Category, "other"), Prefix: p.Payload.Prefix}
	var d agentcore.ApprovalDecision
	if json.Unmarshal(ti.ResumeData, &d) == nil {
		v.Decision = d.Decision
	}
	return v
}
