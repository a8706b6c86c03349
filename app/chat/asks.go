package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"parley/agentcore"
)

// Outside asks: a question or an approval request from a program outside
// Parley (an MCP client), shown to the user and answered from Parley.
//
// An ask is filed as a notification in its chat's inbox (source AskSource,
// the ask's id as its dedupe key, so asking again with the same id finds
// the same record) and waits in memory for its answer. It is not a tool
// call of the chat's agent: answering it starts no run, and the agent's
// history does not change. A restart ends every wait (ErrAskInterrupted);
// the asker calls again with the same id and waits on the same record.

// AskSource is the notification source of outside asks. Its notifications
// are kept in the inbox, never delivered to the agent (see AskPolicy).
const AskSource = "mcp-ask"

// Ask kinds, the kinds of their notifications.
const (
	AskQuestion = "question"
	AskApproval = "approval"
)

// Bounds of what an asker may send: a question is read by a person.
const (
	MaxAskText    = 4000
	MaxAskOptions = 20
	MaxAskOption  = 200
	// MaxAnswer bounds the user's answer.
	MaxAnswer = 8000
)

// Ask is one outside question or approval request.
type Ask struct {
	ID       string   // chosen by the asker (agentcore.ValidID), unique per chat
	ThreadID string   // the chat it is shown in
	Kind     string   // AskQuestion or AskApproval
	Text     string   // the question, or what is to be approved
	Options  []string // a question's choices; the user may still write their own
	Asker    string   // who asks, as the asker names itself
	Link     string   // where the user answers it (a page of this Parley)
}

// Reply is the user's answer.
type Reply struct {
	Answer   string `json:"answer,omitempty"`   // a question's answer
	Approved bool   `json:"approved,omitempty"` // an approval's decision
	Reason   string `json:"reason,omitempty"`   // why, for an approval
}

var (
	// ErrAskInterrupted: Parley stopped before the ask was answered.
	ErrAskInterrupted = errors.New("Parley stopped before the user answered")
	// ErrAskSuperseded: another call with the same id took over the wait.
	ErrAskSuperseded = errors.New("another call with the same id now waits for this answer")
	// ErrNoAsk: no outside ask with that id waits in that chat.
	ErrNoAsk = errors.New("no question with that id is waiting")
)

// CheckAsk reports what is wrong with a, naming the field.
func CheckAsk(a Ask) error {
	switch {
	case !agentcore.ValidID(a.ID):
		return fmt.Errorf("id must be 1 to %d letters, digits, '-' or '_'", agentcore.MaxIDLen)
	case !agentcore.ValidID(a.ThreadID):
		return fmt.Errorf("threadId must be 1 to %d letters, digits, '-' or '_'", agentcore.MaxIDLen)
	case a.Kind != AskQuestion && a.Kind != AskApproval:
		return fmt.Errorf("unknown kind %q", a.Kind)
	case strings.TrimSpace(a.Text) == "":
		return errors.New("the question is empty")
	case len(a.Text) > MaxAskText:
		return fmt.Errorf("the question is %d bytes, more than the %d allowed", len(a.Text), MaxAskText)
	case len(a.Options) > MaxAskOptions:
		return fmt.Errorf("%d options, more than the %d allowed", len(a.Options), MaxAskOptions)
	case len(a.Asker) > MaxAskOption:
		return fmt.Errorf("the asker's name is more than %d bytes", MaxAskOption)
	}
	for i, o := range a.Options {
		if strings.TrimSpace(o) == "" || len(o) > MaxAskOption {
			return fmt.Errorf("options[%d] must be 1 to %d bytes of text", i, MaxAskOption)
		}
	}
	return nil
}

// AskPolicy is the delivery decision for outside asks: kept in the inbox
// for the user, never sent to the agent (it is not the agent's question to
// answer). Add it to the agent's DeliveryPolicy.Sources under AskSource.
var AskPolicy = agentcore.Decision{Action: agentcore.NotifyPersist, Reason: "question-for-the-user"}

// Asks holds the outside asks that wait for the user.
type Asks struct {
	rt   *agentcore.Runtime
	stop <-chan struct{}

	mu      sync.Mutex
	waiting map[string]*waiter // threadID/id
}

type waiter struct {
	ask    Ask
	noteID string
	reply  chan Reply
	gone   chan struct{} // closed when another call takes over
}

// NewAsks returns the asks of rt; every wait ends when stop closes (Parley
// shuts down).
func NewAsks(rt *agentcore.Runtime, stop <-chan struct{}) *Asks {
	return &Asks{rt: rt, stop: stop, waiting: map[string]*waiter{}}
}

func askKey(threadID, id string) string { return threadID + "/" + id }

// Ask files a and waits for the user's reply, until ctx ends (the asker
// gave up: the ask leaves the inbox) or Parley stops (ErrAskInterrupted:
// the ask stays in the inbox, to be asked again with the same id).
func (as *Asks) Ask(ctx context.Context, a Ask) (Reply, error) {
	if err := CheckAsk(a); err != nil {
		return Reply{}, err
	}
	payload, err := json.Marshal(map[string]any{"id": a.ID, "kind": a.Kind, "question": a.Text, "options": a.Options, "asker": a.Asker})
	if err != nil {
		return Reply{}, err
	}
	summary := a.Text
	if a.Kind == AskApproval {
		summary = "Approval requested: " + a.Text
	}
	in := agentcore.NotificationInput{
		Source: AskSource, Kind: a.Kind, Summary: summary, Priority: agentcore.PriorityHigh, Payload: payload,
		SourceID: a.Asker, DedupeKey: a.ID,
	}
	if a.Link != "" {
		in.Metadata = map[string]any{"targetUrl": a.Link}
	}
	res, err := as.rt.Notify(ctx, in, agentcore.NotifyTarget{ThreadID: a.ThreadID})
	if err != nil {
		return Reply{}, err
	}
	w := &waiter{ask: a, noteID: res.Record.ID, reply: make(chan Reply, 1), gone: make(chan struct{})}
	key := askKey(a.ThreadID, a.ID)
	as.mu.Lock()
	if old := as.waiting[key]; old != nil {
		close(old.gone)
	}
	as.waiting[key] = w
	as.mu.Unlock()
	release := func() {
		as.mu.Lock()
		if as.waiting[key] == w {
			delete(as.waiting, key)
		}
		as.mu.Unlock()
	}
	select {
	case r := <-w.reply:
		return r, nil
	case <-w.gone:
		return Reply{}, ErrAskSuperseded
	case <-as.stop:
		release()
		return Reply{}, ErrAskInterrupted
	case <-ctx.Done():
		release()
		// The asker gave up: nobody waits for an answer any more.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), askCleanup)
		defer cancel()
		_, _ = as.rt.SetNotificationStatus(dctx, a.ThreadID, w.noteID, agentcore.NoteDismissed)
		return Reply{}, ctx.Err()
	}
}

// askCleanup bounds the store write after an asker gave up.
const askCleanup = 5 * time.Second

// Waiting returns the ask id waits for in threadID, if one does.
func (as *Asks) Waiting(threadID, id string) (Ask, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	w, ok := as.waiting[askKey(threadID, id)]
	if !ok {
		return Ask{}, false
	}
	return w.ask, true
}

// Answer gives the waiting ask its reply and archives its notification.
func (as *Asks) Answer(ctx context.Context, threadID, id string, r Reply) error {
	if len(r.Answer) > MaxAnswer || len(r.Reason) > MaxAnswer {
		return fmt.Errorf("the answer is more than %d bytes", MaxAnswer)
	}
	as.mu.Lock()
	w, ok := as.waiting[askKey(threadID, id)]
	if ok && w.ask.Kind == AskQuestion && strings.TrimSpace(r.Answer) == "" {
		as.mu.Unlock()
		return errors.New("the answer is empty")
	}
	if ok {
		delete(as.waiting, askKey(threadID, id))
	}
	as.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w (it was answered, or the asker stopped waiting)", ErrNoAsk)
	}
	w.reply <- r
	if _, err := as.rt.SetNotificationStatus(ctx, threadID, w.noteID, agentcore.NoteArchived); err != nil {
		return fmt.Errorf("archive question %s: %w", id, err)
	}
	return nil
}
