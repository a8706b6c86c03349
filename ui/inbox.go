package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/app/chat"
	"parley/components"
)

// The inbox on every page, live, answerable in place: app/chat computes it
// once per change; each page's stream renders the snapshots it publishes.

// inboxView is the inbox as the bell and the panel show it.
func inboxView(in chat.Snapshot) components.Inbox {
	now := time.Now()
	v := components.Inbox{Items: make([]components.InboxItem, 0, len(in.Items)), Sources: in.Sources, Live: true, OlderNotes: in.OlderNotes}
	for _, it := range in.Items {
		item := components.InboxItem{Key: it.Key, Kind: string(it.Kind), ThreadID: it.ThreadID, ThreadTitle: it.ThreadTitle,
			CallID: it.CallID, When: when(it.At, now)}
		switch {
		case it.Notification != nil:
			n := it.Notification
			item.Title, item.Source, item.NoteKind, item.Priority, item.Status = n.Summary, n.Source, n.Kind, string(n.Priority), string(n.Status)
			item.Count, item.Link = n.Count, n.Link
			item.Alert = n.Priority == agentcore.PriorityUrgent || n.Priority == agentcore.PriorityHigh
		case it.Failed != nil:
			item.Title, item.Detail = cmp.Or(it.Failed.Error, "The run failed"), it.Failed.Model
		case it.Approval != nil:
			item.Title = "Allow " + it.Approval.Call.ToolName + "?"
			if card := toolCard(&it.Approval.Call, nil); card != nil {
				// What the call acts on: the title's path or command, else
				// the card's brief.
				item.Detail = cmp.Or(card.TitleCode, card.Brief)
			}
		case it.Plan != nil:
			item.Title = "A plan waits for your review"
			if it.Plan.Title != "" {
				item.Title, item.Detail = it.Plan.Title, it.Plan.Path
			}
		case it.Question != nil:
			item.Title, item.Multi, item.Alert = it.Question.Text, it.Question.Multi, true
			item.Options = optionViews(it.Question.Options)
		}
		v.Items = append(v.Items, item)
	}
	return v
}

// patchInbox sends the bell and the inbox panel's list.
func patchInbox(sse *datastar.ServerSentEventGenerator, in chat.Snapshot) error {
	v := inboxView(in)
	if err := sse.PatchElementTempl(components.InboxBell(v.Count())); err != nil {
		return err
	}
	return sse.PatchElementTempl(components.InboxList(v))
}

// inboxStream keeps the bell and the panel of one page current, and its
// sidebar: it renders each snapshot the inbox publishes, and computes none.
func (s *Server) inboxStream(rw http.ResponseWriter, r *http.Request) {
	w := s.streamWriter(rw)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // server shutdown ends the stream; unregistered when it ends
	watch := s.inboxes.Watch()
	defer watch.Close()
	sse := datastar.NewSSE(w, r, datastar.WithContext(ctx))
	send := func(in chat.Snapshot) error {
		if err := patchInbox(sse, in); err != nil {
			return err
		}
		// Pages without a chat stream keep their sidebar current from
		// here: which chats run, which need you.
		sb, err := s.sidebarFor(ctx, "", in)
		if err != nil {
			return err
		}
		return sse.PatchElementTempl(components.SidebarView(sb))
	}
	// Watching first, then the current inbox: a change between the two
	// comes again, which is idempotent.
	in, err := s.inboxes.Current(ctx)
	if err == nil {
		err = send(in)
	}
	if err != nil {
		s.logStreamEnd("inbox", err)
		return
	}
	for shown := in.Seq; ; {
		select {
		case <-ctx.Done():
			return
		case <-watch.C():
		}
		in := s.inboxes.Latest()
		if in.Seq <= shown {
			continue // the one sent already
		}
		shown = in.Seq
		if err := send(in); err != nil {
			s.logStreamEnd("inbox", err)
			return
		}
	}
}

// inboxAct sets an item aside: a notification marked seen, archived or
// dismissed; anything snoozed ("not now" — it still waits, nothing is
// denied) or dismissed from the inbox.
func (s *Server) inboxAct(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key    string `json:"key"`
		Action string `json:"action"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		http.Error(w, "bad inbox action: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.inboxes.Act(r.Context(), body.Key, body.Action); err != nil {
		s.httpError(w, r, badInboxAction(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// badInboxAction answers a mistake in an inbox action with 400.
func badInboxAction(err error) error {
	if errors.Is(err, chat.ErrBadInboxAction) {
		return fmt.Errorf("%w: %w", errBadRequest, err)
	}
	return err
}

// inboxSeenAll marks seen every unread notification of the source and
// priority given (empty: any), those past the newest inboxMax included.
func (s *Server) inboxSeenAll(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Source   string `json:"source"`
		Priority string `json:"priority"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
		http.Error(w, "bad inbox action: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.inboxes.SeenAll(r.Context(), body.Source, body.Priority); err != nil {
		s.httpError(w, r, badInboxAction(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// inboxFocus records whether a page has the focus (app.js reports it), so
// a desktop shell shows OS notifications only when nobody is looking.
func (s *Server) inboxFocus(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Page    string `json:"page"`
		Focused bool   `json:"focused"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1024)).Decode(&body); err != nil || body.Page == "" {
		http.Error(w, "bad focus report: want {page, focused}", http.StatusBadRequest)
		return
	}
	if body.Focused {
		s.focused.Store(body.Page, true)
	} else {
		s.focused.Delete(body.Page)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Focused reports whether a Parley page has the focus now.
func (s *Server) Focused() bool {
	focused := false
	s.focused.Range(func(_, _ any) bool { focused = true; return false })
	return focused
}
