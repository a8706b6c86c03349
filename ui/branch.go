package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/components"
	"parley/toolkit"
)

// The chat's tree from the page: Edit a sent message in place, Regenerate
// a reply (with the chat's model or another), switch between the
// versions of a turn (‹ n/m ›), Fork a new chat from a message. The chat's
// stream shows the branch that results (agentcore.EventBranch); these
// answers only report a refusal, in the composer's error line.

// branchMessage is the request's message, checked to be in its chat.
func (s *Server) branchMessage(r *http.Request) (agentcore.Message, error) {
	m, err := s.rt.GetMessage(r.Context(), r.PathValue("msg"))
	if err == nil && m.ThreadID != r.PathValue("id") {
		err = fmt.Errorf("message %s is not in chat %s: %w", m.ID, r.PathValue("id"), agentcore.ErrNotFound)
	}
	return m, err
}

// refuse shows why a tree command was not done.
func refuse(w http.ResponseWriter, r *http.Request, what string, err error) {
	msg := ""
	if err != nil {
		msg = what + ": " + err.Error()
	}
	_ = datastar.NewSSE(w, r).PatchElementTempl(components.ComposerError(msg))
}

// stopFirst ends the reply being written on the thread, so that an edit or
// a regeneration does not wait for it. A run that waits for the user (a
// question, a plan, an approval) is ended only when the user said so
// (the form's stop=1, after askedToStop asked); ok is false when it waits
// and they have not.
func (s *Server) stopFirst(r *http.Request) (ok bool) {
	threadID := r.PathValue("id")
	if _, running := s.rt.Live(threadID); !running {
		if !s.rt.Waiting(r.Context(), threadID) {
			return true
		}
		if r.FormValue("stop") != "1" {
			return false
		}
	}
	stop, cancel := context.WithTimeout(r.Context(), stopWait)
	defer cancel()
	s.rt.Stop(stop, threadID)
	return true
}

// messageEditor shows the in-place editor of a sent message.
func (s *Server) messageEditor(w http.ResponseWriter, r *http.Request) {
	s.patchMessage(w, r, true)
}

// messageAgain shows a message as the chat does (the editor's Cancel).
func (s *Server) messageAgain(w http.ResponseWriter, r *http.Request) {
	s.patchMessage(w, r, false)
}

func (s *Server) patchMessage(w http.ResponseWriter, r *http.Request, editing bool) {
	m, err := s.branchMessage(r)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	live, running := s.rt.Live(m.ThreadID)
	v := s.messageView(m, live, running, nil)
	if editing {
		if !v.CanRewrite {
			refuse(w, r, "Not edited", agentcore.ErrNotEditable)
			return
		}
		v.Editing, v.Text = true, m.Content.Text()
		v.Rewind = rewindViews(s.rewindPlan(r.Context(), m))
	}
	_ = datastar.NewSSE(w, r).PatchElementTempl(components.MessageView(v))
}

// editMessage sends the editor's text as a new version of the message.
func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		refuse(w, r, "Not sent", fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	text := r.PostFormValue("text")
	if strings.TrimSpace(text) == "" {
		refuse(w, r, "Not sent", errors.New("the message is empty"))
		return
	}
	m, err := s.branchMessage(r)
	if err != nil {
		refuse(w, r, "Not sent", err)
		return
	}
	if !s.stopFirst(r) {
		// Asked first, the text as typed kept.
		live, running := s.rt.Live(m.ThreadID)
		v := s.messageView(m, live, running, nil)
		v.Editing, v.Text, v.AskStop = true, text, true
		v.Rewind = rewindViews(s.rewindPlan(r.Context(), m))
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.MessageView(v))
		return
	}
	if err := s.rewindIfAsked(r); err != nil {
		refuse(w, r, "Not sent", err)
		return
	}
	_, err = s.rt.Edit(r.Context(), agentcore.EditRequest{ThreadID: m.ThreadID, MessageID: m.ID, Text: text})
	refuse(w, r, "Not sent", err)
}

// regenerate answers again in place of a reply, with ?model= or the
// chat's model.
func (s *Server) regenerate(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		refuse(w, r, "Not regenerated", fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	model := strings.TrimSpace(r.FormValue("model"))
	if model != "" {
		if err := s.cfg.CheckModel(model); err != nil {
			refuse(w, r, "Not regenerated", fmt.Errorf("model “%s” cannot be used: %s", model, strings.TrimPrefix(err.Error(), "llm: ")))
			return
		}
	}
	m, err := s.branchMessage(r)
	if err != nil {
		refuse(w, r, "Not regenerated", err)
		return
	}
	if !s.stopFirst(r) {
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.RegenerateStop(m.ThreadID, m.ID, model))
		return
	}
	if r.FormValue("files") == "" {
		// The branch being left changed files: ask first whether to put
		// them back.
		if files := s.rewindPlan(r.Context(), m); len(files) > 0 {
			_ = datastar.NewSSE(w, r).PatchElementTempl(components.RegenerateRewind(m.ThreadID, m.ID, model, rewindViews(files)))
			return
		}
	}
	if err := s.rewindIfAsked(r); err != nil {
		refuse(w, r, "Not regenerated", err)
		return
	}
	_, err = s.rt.Regenerate(r.Context(), agentcore.RegenerateRequest{ThreadID: m.ThreadID, MessageID: m.ID, Model: model})
	refuse(w, r, "Not regenerated", err)
}

// rewindPlan is what leaving the branch from message m on (m and the
// messages after it) would do to the files its tool calls changed.
func (s *Server) rewindPlan(ctx context.Context, m agentcore.Message) []toolkit.RewindFile {
	if s.cfg.Journal == nil {
		return nil
	}
	left, err := s.rt.ListMessages(ctx, m.ThreadID, agentcore.MessageQuery{AfterSeq: m.Seq - 1})
	if err != nil {
		s.log.Warn("the branch's file changes are not readable", "message", m.ID, "err", err)
		return nil
	}
	var calls []string
	for _, lm := range left {
		for _, p := range lm.Content.Parts {
			if p.ToolInvocation != nil {
				calls = append(calls, p.ToolInvocation.ToolCallID)
			}
		}
	}
	if len(calls) == 0 {
		return nil
	}
	writes, err := s.cfg.Journal.FileWrites(ctx, m.ThreadID, calls)
	if err != nil {
		s.log.Warn("the branch's file changes are not readable", "message", m.ID, "err", err)
		return nil
	}
	return toolkit.PlanRewind(writes)
}

// rewindIfAsked puts the files back before the branch is left, when the
// form says files=restore; overwrite=1 lets it overwrite files changed
// outside Parley since, which it otherwise refuses, naming them.
func (s *Server) rewindIfAsked(r *http.Request) error {
	switch r.FormValue("files") {
	case "", "keep":
		return nil
	case "restore":
	default:
		return fmt.Errorf("%w: files must be keep or restore", errBadRequest)
	}
	m, err := s.branchMessage(r)
	if err != nil {
		return err
	}
	_, err = toolkit.ApplyRewind(s.rewindPlan(r.Context(), m), r.FormValue("overwrite") == "1")
	if err != nil {
		return fmt.Errorf("the files were not put back: %w", err)
	}
	return nil
}

// rewindViews is how the page shows a rewind's files.
func rewindViews(files []toolkit.RewindFile) []components.RewindFile {
	var out []components.RewindFile
	for _, f := range files {
		how := "put back as it was"
		if f.Remove {
			how = "removed: it did not exist before"
		}
		out = append(out, components.RewindFile{Path: f.Path, How: how, Why: f.Why, Blocked: f.Blocked, Changed: f.Changed})
	}
	return out
}

// regenerateModels offers the models a reply can be regenerated with.
func (s *Server) regenerateModels(w http.ResponseWriter, r *http.Request) {
	m, err := s.branchMessage(r)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	t, err := s.rt.GetThread(r.Context(), m.ThreadID)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	current := s.threadModel(t)
	_ = datastar.NewSSE(w, r).PatchElementTempl(components.RegenerateModels(m.ThreadID, m.ID, s.modelList(current), current))
}

// switchBranch shows another version of a turn.
func (s *Server) switchBranch(w http.ResponseWriter, r *http.Request) {
	err := s.rt.SwitchBranch(r.Context(), r.PathValue("id"), r.PathValue("msg"))
	refuse(w, r, "Not switched", err)
}

// fork starts a new chat from a message (a plain form: the browser goes
// to the new chat).
func (s *Server) fork(w http.ResponseWriter, r *http.Request) {
	t, err := s.rt.Fork(r.Context(), r.PathValue("id"), r.PathValue("msg"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	http.Redirect(w, r, components.ThreadURL(t.ID), http.StatusSeeOther)
}

// showBranch replaces the chat's messages with the active branch's, as
// the page opened them; the messages added and changed in the same frame
// are patched after it.
func (v *chatStream) showBranch(ctx context.Context) error {
	t, err := v.s.rt.GetThread(ctx, v.id)
	if err != nil {
		return err
	}
	c, err := v.s.chat(ctx, t, "")
	if err != nil {
		return err
	}
	v.shown, v.live = map[string]bool{}, map[string]*liveReply{}
	for _, m := range c.Messages {
		v.shown[m.ID] = true
	}
	v.actions, v.tasks, v.usage = true, true, true
	return v.sse.PatchElementTempl(components.Messages(c))
}
