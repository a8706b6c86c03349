package ui

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/components"
)

// A long thread is shown a page at a time: it opens on its latest page (or
// on the page around a search hit) and the rest loads as the reader
// scrolls, so opening a thread of 10,000 messages costs what opening one of
// 50 does. Pages are cut by the messages' Seq, through the (thread_id, seq)
// index.

// messageWindow returns the messages a chat opens on and where they sit in
// the thread: the latest page, or, when at names one of the thread's
// messages that is not on it, the page around that message. An at that
// names no message of the thread opens the latest page.
func (s *Server) messageWindow(ctx context.Context, threadID, at string) ([]agentcore.Message, components.Pager, error) {
	p := components.Pager{ThreadID: threadID}
	latest, err := s.rt.ListMessages(ctx, threadID, agentcore.MessageQuery{Limit: pageMessages + 1, Last: true})
	if err != nil {
		return nil, p, fmt.Errorf("list messages of %s: %w", threadID, err)
	}
	if len(latest) > pageMessages {
		latest = latest[1:]
		p.Before = latest[0].Seq
	}
	if at == "" {
		return latest, p, nil
	}
	target, err := s.rt.GetMessage(ctx, at)
	if err != nil || target.ThreadID != threadID || !target.Active {
		// A stale link, or a message of a branch not shown (the chat was
		// switched away since): the thread is still worth showing.
		return latest, p, nil
	}
	p.At = at
	if len(latest) == 0 || target.Seq >= latest[0].Seq {
		return latest, p, nil
	}

	// Half a page before the target, the target and what follows it.
	half := pageMessages / 2
	before, err := s.rt.ListMessages(ctx, threadID, agentcore.MessageQuery{BeforeSeq: target.Seq, Limit: half + 1, Last: true})
	if err != nil {
		return nil, p, fmt.Errorf("list messages of %s before %d: %w", threadID, target.Seq, err)
	}
	p.Before = 0
	if len(before) > half {
		before = before[1:]
		p.Before = before[0].Seq
	}
	rest := pageMessages - len(before)
	after, err := s.rt.ListMessages(ctx, threadID, agentcore.MessageQuery{AfterSeq: target.Seq - 1, Limit: rest + 1})
	if err != nil {
		return nil, p, fmt.Errorf("list messages of %s from %d: %w", threadID, target.Seq, err)
	}
	if len(after) > rest {
		after = after[:rest]
		// Later messages load a page at a time up to what the chat's
		// stream will add itself.
		p.After, p.Until = after[len(after)-1].Seq, latest[len(latest)-1].Seq+1
	}
	return append(before, after...), p, nil
}

// olderPage answers the older loader: the page before its cursor, in its
// place.
func (s *Server) olderPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	before, err := seqParam(r, "before")
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	t, err := s.rt.GetThread(ctx, r.PathValue("id"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	msgs, err := s.rt.ListMessages(ctx, t.ID, agentcore.MessageQuery{BeforeSeq: before, Limit: pageMessages + 1, Last: true})
	if err != nil {
		s.httpError(w, r, fmt.Errorf("list messages of %s before %d: %w", t.ID, before, err))
		return
	}
	p := components.Pager{ThreadID: t.ID}
	if len(msgs) > pageMessages {
		msgs = msgs[1:]
		p.Before = msgs[0].Seq
	}
	sse := datastar.NewSSE(w, r)
	_ = sse.PatchElementTempl(components.OlderPage(p, s.pageViews(t.ID, msgs)),
		datastar.WithSelectorID("older"), datastar.WithModeReplace())
}

// newerPage answers the newer loader: the page after its cursor, up to
// until (exclusive), in its place.
func (s *Server) newerPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	after, err := seqParam(r, "after")
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	until, err := seqParam(r, "until")
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	t, err := s.rt.GetThread(ctx, r.PathValue("id"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	msgs, err := s.rt.ListMessages(ctx, t.ID, agentcore.MessageQuery{AfterSeq: after, BeforeSeq: until, Limit: pageMessages + 1})
	if err != nil {
		s.httpError(w, r, fmt.Errorf("list messages of %s after %d: %w", t.ID, after, err))
		return
	}
	p := components.Pager{ThreadID: t.ID}
	if len(msgs) > pageMessages {
		msgs = msgs[:pageMessages]
		p.After, p.Until = msgs[len(msgs)-1].Seq, until
	}
	sse := datastar.NewSSE(w, r)
	_ = sse.PatchElementTempl(components.NewerPage(p, s.pageViews(t.ID, msgs)),
		datastar.WithSelectorID("newer"), datastar.WithModeReplace())
}

// pageViews renders the messages of a page; the one a run is writing shows
// what the run has so far.
func (s *Server) pageViews(threadID string, msgs []agentcore.Message) []components.Message {
	live, running := s.rt.Live(threadID)
	out := make([]components.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, s.messageView(m, live, running, nil))
	}
	return out
}

// seqParam reads a page cursor: a message's Seq, 1 or more.
func seqParam(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %s must be a message's sequence number (1 or more), not %q", errBadRequest, name, v)
	}
	return n, nil
}
