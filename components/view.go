// Package components holds Parley's templ components. They take plain view
// structs (never store rows) and give every element a stable id derived from
// domain ids, because Datastar morphs by id.
package components

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/a-h/templ"
)

// Page is the whole app page.
type Page struct {
	Sidebar Sidebar
	Chat    *Chat // nil: the "new chat" screen
	Banner  Banner
	// Models offered by the model picker (provider/model strings).
	Models []string
	// Welcome is the new-chat screen's form, shown when Chat is nil.
	Welcome WelcomeForm
}

// WelcomeForm is what the new-chat screen holds: the model, and after a
// refused start the message as typed and why nothing was started.
type WelcomeForm struct {
	Text  string
	Model string
	Mode  string // "build" | "plan": the mode the new chat starts in
	Error string
	// Agents are the agents a new chat can run, the built-in one first;
	// Agent is the one chosen ("": the built-in one).
	Agents []AgentChoice
	Agent  string
	// Attached is the files added so far (the attached signal) and Files
	// their chips, kept when a start is refused.
	Attached string
	Files    []Attachment
}

// Banner is what every screen says above itself: the app's mode (scripted
// demo replies), a nearly full disk.
type Banner struct {
	Demo bool
	// LowDisk warns that the data folder's disk is nearly full.
	LowDisk string
}

// Sidebar is the thread list, in groups: Pinned, then by the day of each
// chat's last message (Today, Yesterday, Previous 7 days, Previous 30 days,
// then by month), as the peers group theirs.
type Sidebar struct {
	Groups   []ThreadGroup
	ActiveID string
}

// ThreadGroup is one heading of the sidebar and the chats under it.
type ThreadGroup struct {
	ID      string // stable: "pinned", "today", "month-2025-10" (the heading's id is derived from it)
	Label   string // "Pinned", "Today", "October", "October 2025"
	Threads []ThreadItem
}

// ThreadItem is one thread in the sidebar.
type ThreadItem struct {
	ID      string
	Title   string
	Pinned  bool
	Running bool
	When    string // "14:05", "Mon", "12 Nov"
	// NeedsYou: something of this chat waits in the inbox (a question, a
	// plan, an approval, a failed run, a notification).
	NeedsYou bool
}

// Chat is one open thread.
type Chat struct {
	ThreadID  string
	Title     string
	Model     string
	Running   bool
	Waiting   bool // its run waits for the user (a question, plan or approval): Stop ends it
	Messages  []Message
	Deleted   bool
	Mode      string // "build" | "plan"
	YOLO      bool   // tool calls run without asking
	Workspace string // the folder the agent works in
	// Agent is the name of the chat's agent when it is one of the user's
	// ("": the built-in one).
	Agent   string
	CanPick bool // a native folder picker is available (desktop)
	Tasks   []Task
	Plans   []PlanRef // approved plans, newest last
	Pager   Pager     // where Messages sit in a long thread
	Usage   ThreadUsage
	// ForkedFrom: the chat was forked from another (Fork): where from.
	ForkedFrom *ForkRef
	// Instructions are what the model is told beside the agent's own: the
	// project's file and the chat's own.
	Instructions Instructions
	// Thinking is the chat's thinking level ("": the model's default);
	// NoThinking hides the control (the model is known to have none).
	Thinking   string
	NoThinking bool
	// Sampling are the chat's own temperature, max output tokens and top-p.
	Sampling Sampling
}

// ThinkingChoice is one option of the header's Thinking control.
type ThinkingChoice struct{ Value, Label string }

// ThinkingChoices are the Thinking control's options: the model's own
// default (nothing is sent), then the levels.
var ThinkingChoices = []ThinkingChoice{{"", "default"}, {"off", "off"}, {"low", "low"}, {"medium", "medium"}, {"high", "high"}}

// Instructions are a chat's instructions as the header shows them.
type Instructions struct {
	File      string // "AGENTS.md" or "CLAUDE.md" at the workspace root; "" when none
	Text      string // the file's text, as the model is given it
	Truncated bool
	Problem   string // why a file that is there is not used
	Chat      string // the chat's own instructions
}

// InUse says whether the model is given any of them.
func (in Instructions) InUse() bool { return in.Text != "" || in.Chat != "" }

// ForkRef is the chat and message a fork was made from. ThreadID is ""
// when that chat is not here any more (deleted, or the fork was imported).
type ForkRef struct {
	ThreadID, MessageID, Title string
}

// ForkURL opens the chat a fork came from at the message it was made at.
func ForkURL(f ForkRef) string {
	return ThreadURL(f.ThreadID) + "?m=" + url.QueryEscape(f.MessageID)
}

// Task is one item of the pinned task list.
type Task struct {
	ID         string
	Content    string
	Status     string // pending | in_progress | completed
	ActiveForm string
}

// PlanRef is an approved plan of the thread.
type PlanRef struct {
	Title, Path, When string
}

// PlanReview is a submit_plan call: the plan under review, or decided.
type PlanReview struct {
	Title    string
	Path     string
	HTML     string // the plan, as sanitised markdown
	Decision string // "", "approved" or "rejected"
	Feedback string
}

// tasksDone counts completed tasks.
func tasksDone(ts []Task) int {
	n := 0
	for _, t := range ts {
		if t.Status == "completed" {
			n++
		}
	}
	return n
}

// showTasks: the panel hides when there is nothing left to do.
func showTasks(ts []Task) bool { return len(ts) > 0 && tasksDone(ts) < len(ts) }

// Message is one rendered message.
type Message struct {
	ID     string
	Role   string // "user" | "assistant"
	HTML   string // sanitised markdown (user messages, and replies without parts)
	Parts  []Part // an assistant reply's text and tool calls, in order
	Status string // "streaming" | "complete" | "interrupted" | "error"
	Note   string // "Stopped", "Interrupted — …"
	Error  string // the provider's reason
	// NotSaved: the reply failed because Parley could not write it (a
	// full disk), not because of the model.
	NotSaved bool
	Model    string
	Hit      bool   // the message a search opened the chat on: highlighted briefly
	Badge    string // a user message sent while the agent worked: "Queued — …"
	// CanEdit: the message waits unread and can be taken back to edit.
	CanEdit bool
	// Retried: a failed or stopped reply answered again (Retry).
	Retried bool
	// HasText: the reply has text to copy.
	HasText  bool
	ThreadID string
	// Unsend: the message waits unread and can be taken back to edit.
	Unsend string // its thread id, when it can
	// Signal is what reached the thread from outside the composer (a
	// notification, a state update, a reminder), shown as one line.
	Signal *SignalLine
	Usage  *Usage // tokens and cost of a reply that recorded them
	// Files are the files a user message carries.
	Files []Attachment
	// WaitingSince is when the run writing this reply started, in Unix
	// milliseconds, while no part of it has come yet (0: not waiting): the
	// reply shows how long the model has been waited for.
	WaitingSince int64
	// Live: a reply being written. Its body has an id and is left alone
	// when the message is morphed (data-ignore-morph): the stream patches
	// the pieces inside it on their own (ui's liveReply).
	Live bool
	// Shell: render the message without its body's content or cursor
	// (with Live, a morph of it changes everything but the body).
	Shell bool
	// Versions: the message is one of several versions of its turn (an
	// edited message, a regenerated reply): ‹ n/m › switches between them.
	Versions *Versions
	// CanRewrite: a message the user sent, which Edit replaces with a new
	// version; CanRegenerate: a finished reply, which Regenerate answers
	// again; CanFork: a stored message a new chat can start from.
	CanRewrite, CanRegenerate, CanFork bool
	// Editing: show the in-place editor instead of the message's text.
	Editing bool
	// Rewind: the files the branch below this message changed, which the
	// editor offers to put back as they were.
	Rewind []RewindFile
	// Text is the message's text, for the editor.
	Text string
	// AskStop: the chat's run waits for the user; sending the edit ends
	// it, and the editor says so before it does.
	AskStop bool
}

// RewindFile is a file a branch changed, as Edit and Regenerate offer to
// put it back: How says what putting it back does ("restore", "remove"),
// Why what stands in the way, if anything.
type RewindFile struct {
	Path, How, Why   string
	Blocked, Changed bool
}

// rewindChanged says whether any of files changed outside Parley since.
func rewindChanged(files []RewindFile) bool {
	for _, f := range files {
		if f.Changed && !f.Blocked {
			return true
		}
	}
	return false
}

// Versions is where a message stands among the versions of its turn.
type Versions struct {
	N, Of      int    // version N of Of, counting from 1
	Prev, Next string // the neighbouring versions' ids ("" at the ends)
}

// RegenerateURL answers again in place of a reply with model.
func RegenerateURL(threadID, messageID, model string) string {
	return BranchURL(threadID, messageID, "regenerate") + "?" + url.Values{"model": {model}}.Encode()
}

// BranchURL is the address of one of a message's tree commands (action is
// a constant: "edit", "editor", "view", "regenerate", "switch", "fork").
func BranchURL(threadID, messageID, action string) string {
	return ThreadAction(threadID, "m/"+seg(messageID)+"/"+action)
}

func bodyAttrs(m Message) templ.Attributes {
	if !m.Live {
		return nil
	}
	return templ.Attributes{"id": BodyID(m.ID), "data-ignore-morph": true}
}

// BodyID is the DOM id of a reply's body while it is written.
func BodyID(id string) string { return "body-" + id }

// StreamID is the DOM id of the element that holds a chat page's stream
// open; the stream's requests for acknowledgement are put in it.
const StreamID = "stream"

// CursorID is the DOM id of a reply's streaming cursor.
func CursorID(id string) string { return "cursor-" + id }

// MsgID is the DOM id of a message.
func MsgID(id string) string { return "msg-" + id }

// ThreadURL is the address of a thread.
func ThreadURL(id string) string { return "/t/" + seg(id) }

// ThreadAction is the address of one of a thread's commands (action is a
// constant such as "pin" or "send?queue=1").
func ThreadAction(id, action string) string { return ThreadURL(id) + "/" + action }

// UnsendURL takes a queued or steering message back.
func UnsendURL(threadID, messageID string) string {
	return ThreadAction(threadID, "unsend/"+seg(messageID))
}

// ProviderURL is the address of one of a provider's settings commands.
func ProviderURL(name, action string) string {
	return "/settings/providers/" + seg(name) + "/" + action
}

// title is what the sidebar and header show for a thread.
func title(t string) string {
	if t == "" {
		return "New chat"
	}
	return t
}

// chatSignals are the Datastar signals of a chat: the draft, the rename
// field and the model picker.
func chatSignals(c Chat) map[string]any {
	return map[string]any{"draft": "", "title": "", "path": "", "model": c.Model, "attached": ""}
}

// Attachment is a file on a message or in the composer: a chip with its
// name and size, a thumbnail for an image, opening the file.
type Attachment struct {
	Ref   string // the SHA-256 it is stored by
	Name  string
	Size  string // for a person: "34 KB"
	Image bool
}

// FileURL is where a stored file is served.
func FileURL(ref string) string { return "/files/" + seg(ref) }

// ForgetFileURL takes the file ref out of the composer's files.
func ForgetFileURL(ref string) string { return "/files/forget?" + url.Values{"ref": {ref}}.Encode() }

// Part is one piece of a reply: rendered text or a tool call.
type Part struct {
	HTML      string    // sanitised markdown, when Tool and Reasoning are empty
	Reasoning string    // the model's reasoning, shown collapsed
	Tool      *ToolCard // a tool call
	ID        string    // the reasoning's DOM id in a reply being written
}

func partAttrs(p Part) templ.Attributes {
	if p.ID == "" {
		return nil
	}
	return templ.Attributes{"id": p.ID}
}

// ToolCard is one tool call as the transcript shows it.
type ToolCard struct {
	CallID   string
	Name     string
	State    string // input-streaming | running | done | error | suspended
	Args     []Field
	ArgsNote string // e.g. "arguments hidden" when a display transform suppresses them
	Progress string
	Result   string // pretty JSON or text
	Error    string
	// Question is an ask_user call's question; Answer its answer once given.
	Question *Question
	Answer   string
	// Brief is the one-line summary in the card's header.
	Brief string
	// Plan is a submit_plan call's plan.
	Plan *PlanReview
	// Approval asks the user to allow the call (or shows the decision).
	Approval *ApprovalView
	// Preview is the live view of what a workspace tool is about to do:
	// the path, the diff being typed, the content being written.
	Preview  *Preview
	ThreadID string
	// Title is what the call does, in words ("Write", "Ran", "Searched
	// for"); TitleCode the path, command or pattern it acts on, shown as
	// code after it. Name stays the raw tool name, for data-tool-name.
	Title     string
	TitleCode string
	// Tasks are the rows of a task list call (task_write while it streams,
	// the list a task tool returned).
	Tasks []Task
	// Details are the raw arguments and result, pretty-printed, behind a
	// collapsed toggle.
	Details *ToolDetails
}

// ToolDetails are a call's raw arguments and result as indented JSON.
type ToolDetails struct {
	Args   string
	Result string
}

// Preview is a workspace tool's live (or final) view.
type Preview struct {
	Path     string
	Ext      string // file-type badge
	Command  string // execute_command
	Pattern  string // find_files, search_content
	Diff     []DiffLine
	DiffNote string // "… 120 lines above", "diff of the file after the edit"
	// More are the lines of a complete diff past the first ones, shown by
	// "Show all"; Total counts Diff and More; MoreNote says when even More
	// is cut.
	More     []DiffLine
	Total    int
	MoreNote string
	Code     string // write_file: highlighted tail of the content (sanitised)
	Lines    int    // write_file: lines so far
	Above    int    // write_file: lines above the tail shown
}

// DiffLine is one line of a diff.
type DiffLine struct {
	Kind string // add | del | ctx | hunk
	Old  int    // line number in the old text (0: none)
	New  int    // line number in the new text (0: none)
	Text string
}

// toolTitle is a card's title without its code part: the title, else the
// tool's name.
func toolTitle(t ToolCard) string {
	if t.Title == "" && t.TitleCode == "" {
		return t.Name
	}
	return t.Title
}

func lineNo(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// Question is what ask_user asks.
type Question struct {
	Text    string
	Options []Option
	Multi   bool
}

// Option is one choice of a question.
type Option struct {
	Label       string
	Description string
}

// AnswerURL is where a tool call's answer is posted.
func AnswerURL(threadID, callID string) string { return ThreadAction(threadID, "answer/"+seg(callID)) }

// Field is one argument in a tool card's preview.
type Field struct {
	Key   string
	Value string
}

// ToolID is the DOM id of a tool card.
func ToolID(callID string) string { return "tool-" + callID }

// toolOpen says whether a card starts expanded: while it streams or runs,
// and when it failed; a finished call is collapsed.
func toolOpen(t ToolCard) bool { return t.State != "done" }

func stateLabel(state string) string {
	switch state {
	case "input-streaming":
		return "writing…"
	case "running":
		return "running…"
	case "done":
		return "done"
	case "error":
		return "failed"
	case "suspended":
		return "waiting for you"
	}
	return state
}

func questionHint(q Question) string {
	switch {
	case q.Multi:
		return "Space to toggle · Enter to confirm · Esc to skip"
	case len(q.Options) > 0:
		return "↑↓ to navigate · Enter to select · Esc to skip"
	}
	return "Enter to submit · Esc to skip"
}

// hasBody says whether a card has anything to show below its header.
func hasBody(t ToolCard) bool {
	return t.Preview != nil || (len(t.Args) > 0 && t.Question == nil && t.Plan == nil) || t.ArgsNote != "" || t.Progress != "" || t.Error != "" || t.Result != "" || len(t.Tasks) > 0 || t.Details != nil
}

func planState(t ToolCard) string {
	if t.State == "suspended" {
		return "pending"
	}
	return "decided"
}

// planDecision is how a decided plan's card names the decision.
func planDecision(p *PlanReview) string {
	switch {
	case p.Decision == "approved":
		return "Approved"
	case p.Decision == "rejected" && strings.TrimSpace(p.Feedback) != "":
		return "Changes requested"
	case p.Decision == "rejected":
		return "Rejected"
	}
	return p.Decision
}

func planTitle(p *PlanReview) string {
	if p.Title == "" {
		return "Implementation plan"
	}
	return p.Title
}

// ApprovalView is a tool call waiting for the user's approval.
type ApprovalView struct {
	Category string
	Prefix   string // execute_command: what "always" remembers
	Decision string // "", "allow", "always", "deny"
}

// alwaysLabel says what "Always allow" remembers.
func alwaysLabel(a ApprovalView) string {
	switch {
	case a.Category == "execute" && a.Prefix != "":
		return "Always allow “" + a.Prefix + " …”"
	case a.Category == "execute":
		return "Always allow"
	}
	return "Always allow " + a.Category + " tools here"
}

func decisionLabel(d string) string {
	switch d {
	case "allow":
		return "allowed once"
	case "always":
		return "always allowed"
	case "deny":
		return "denied"
	}
	return ""
}

func itoa(n int) string { return fmt.Sprint(n) }

// baseName is the last element of a folder path.
func baseName(p string) string {
	p = strings.TrimRight(p, `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// SignalLine is a signal as the thread shows it.
type SignalLine struct {
	Tag      string // the XML tag: notification, notification-summary, state, system-reminder, …
	Label    string
	Text     string
	Priority string // notifications
}

// MessageTextURL is where a message's text (a reply's Markdown) is read
// from, for its Copy button.
func MessageTextURL(threadID, messageID string) string {
	return ThreadAction(threadID, "messages/"+seg(messageID)+"/text")
}

// taskActive is what a task in progress shows: its active form, else (a
// task still being written) its content.
func taskActive(t Task) string {
	if t.ActiveForm != "" {
		return t.ActiveForm
	}
	return t.Content
}

// plural is one or many, as n asks.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
