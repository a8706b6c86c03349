package ui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/app/chat"
	"parley/components"
	"parley/toolkit"
)

// instructions are what a chat's model is told beside Parley's own, as
// the header shows them: the workspace's AGENTS.md (or CLAUDE.md), read
// as a run reads it, and the chat's own.
func (s *Server) instructions(ctx context.Context, t agentcore.Thread) components.Instructions {
	in := components.Instructions{Chat: chat.Of(t).Instructions}
	ws, err := toolkit.NewWorkspace(threadWorkspace(t, s.cfg.Workspace))
	if err != nil {
		return in
	}
	pi := toolkit.ReadProjectInstructions(ctx, ws)
	in.File, in.Text, in.Truncated, in.Problem = pi.File, pi.Text, pi.Truncated, pi.Problem
	return in
}

// setInstructions saves the chat's own instructions (the header's form):
// the next run follows them. Empty removes them.
func (s *Server) setInstructions(w http.ResponseWriter, r *http.Request) {
	sse := func(msg string) {
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.InstructionsStatus(msg))
	}
	if err := r.ParseForm(); err != nil {
		sse("Not saved: " + err.Error())
		return
	}
	text := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue("text"), "\r\n", "\n"))
	switch {
	case len(text) > chat.MaxChatInstructions:
		sse(fmt.Sprintf("Not saved: instructions are limited to %d KiB (these are %d KiB).", chat.MaxChatInstructions>>10, (len(text)+1023)>>10))
		return
	case !utf8.ValidString(text) || strings.ContainsRune(text, 0):
		sse("Not saved: the instructions are not plain text.")
		return
	}
	if _, err := s.chats().Update(r.Context(), r.PathValue("id"), func(st *chat.Settings) error {
		st.Instructions = text
		return nil
	}); err != nil {
		if agentcore.IsNotFound(err) {
			s.httpError(w, r, err)
			return
		}
		sse("Not saved: " + err.Error())
		return
	}
	if text == "" {
		sse("Removed.")
		return
	}
	sse("Saved: the next reply follows them.")
}
