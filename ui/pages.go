package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/app/chat"
	"parley/components"
	"parley/ui/markdown"
)

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	s.welcome(w, r, http.StatusOK, components.WelcomeForm{Model: s.defaultModel(), Mode: string(chat.ModeBuild)})
}

// welcome renders the new-chat screen holding f.
func (s *Server) welcome(w http.ResponseWriter, r *http.Request, status int, f components.WelcomeForm) {
	sb, err := s.sidebar(r.Context(), "")
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	f.Agents = s.agentChoices(r)
	s.render(w, r, status, components.Page{Sidebar: sb, Banner: s.banner(), Models: s.modelList(f.Model), Welcome: f})
}

// defaultModel is the model a new chat uses unless it picks another.
func (s *Server) defaultModel() string {
	if a, err := s.rt.Agent(""); err == nil {
		return a.CurrentModel()
	}
	return ""
}

func (s *Server) threadPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, err := s.rt.GetThread(ctx, r.PathValue("id"))
	if errors.Is(err, agentcore.ErrNotFound) {
		s.chatNotFound(w, r)
		return
	}
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	sb, err := s.sidebar(ctx, t.ID)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	s.followHit(r, t, r.URL.Query().Get("m"))
	c, err := s.chat(ctx, t, r.URL.Query().Get("m"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, components.Page{Sidebar: sb, Chat: &c, Banner: s.banner(), Models: s.modelList(c.Model)})
}

// chatNotFound answers a link to a chat that does not exist with a 404 page
// in the app's layout that says so: a redirect to the new-chat screen left
// the user wondering where the chat had gone.
func (s *Server) chatNotFound(w http.ResponseWriter, r *http.Request) {
	sb, err := s.sidebar(r.Context(), "")
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	if err := components.NotFoundPage(sb, s.banner()).Render(r.Context(), w); err != nil {
		s.log.Warn("render page", "path", r.URL.Path, "err", err)
	}
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, p components.Page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	ctx := r.Context()
	if p.Chat != nil {
		ctx = components.WithInboxInChatStream(ctx) // the chat's stream carries it
	}
	if err := components.App(p).Render(ctx, w); err != nil {
		s.log.Warn("render page", "path", r.URL.Path, "err", err)
	}
}

func (s *Server) codeCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	fmt.Fprint(w, codeCSS())
}

// createThread starts a chat from the welcome screen's plain form (works
// without script): the chat is stored with its first message, then the
// browser goes to it. A start that cannot be made (no message, a model that
// cannot be used, a send that fails) stores nothing: the welcome screen
// comes back with the message as typed and the reason, as text.
func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	text := r.PostFormValue("text")
	model := strings.TrimSpace(r.PostFormValue("model"))
	// The mode the chat starts in (the welcome screen's Build / Plan
	// switch); a form without one (no script, an older page) builds.
	mode, err := chat.ParseMode(cmp.Or(r.PostFormValue("mode"), string(chat.ModeBuild)))
	if err != nil {
		s.httpError(w, r, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	agent := r.PostFormValue("agent") // "": the built-in agent
	form := components.WelcomeForm{Text: text, Model: cmp.Or(model, s.defaultModel()), Mode: string(mode), Agent: agent}
	refused := func(reason string) { form.Error = reason; s.welcome(w, r, http.StatusUnprocessableEntity, form) }
	// The files added so far, checked again (the form is the page's).
	form.Attached = r.PostFormValue("attached")
	form.Files = s.attachments(r, parseAttached(form.Attached))
	files, err := s.sendFiles(r, form.Attached)
	if err != nil {
		refused("Not sent: " + err.Error())
		return
	}
	if strings.TrimSpace(text) == "" && len(files) == 0 {
		refused("Write a message first: a chat starts with its first message.")
		return
	}
	t := agentcore.Thread{ResourceID: defaultResource}
	settings := chat.Settings{Mode: mode}
	if s.cfg.Agents != nil && !s.cfg.Agents.IsBuiltin(agent) {
		// The chat keeps its agent; the mode and model are the form's
		// (the chooser set them to the agent's own).
		own, err := s.cfg.Agents.NewChat(ctx, agent)
		if err != nil {
			refused("That agent is not here any more: pick another.")
			return
		}
		settings.Agent, settings.Model = own.Agent, own.Model
	}
	if model != "" && model != cmp.Or(settings.Model, s.defaultModel()) {
		if err := s.cfg.CheckModel(model); err != nil {
			refused(fmt.Sprintf("Model “%s” cannot be used: %s", model, strings.TrimPrefix(err.Error(), "llm: ")))
			return
		}
		settings.Model = model
	}
	// Stored with the chat, so its first run already has the mode's tools
	// and instructions.
	t.Metadata = chat.Metadata(settings)
	t, err = s.rt.CreateThread(ctx, t)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	if _, err := s.rt.Send(ctx, agentcore.SendRequest{ThreadID: t.ID, Text: text, Files: files}); err != nil {
		// Nothing was started: the chat would stay behind empty.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopWait)
		defer cancel()
		if derr := s.rt.DeleteThread(cleanup, t.ID); derr != nil {
			s.log.Warn("remove the chat of a failed start", "thread", t.ID, "err", derr)
		}
		refused("Not sent: " + err.Error())
		return
	}
	http.Redirect(w, r, components.ThreadURL(t.ID), http.StatusSeeOther)
}

// defaultResource owns the threads made in the UI (Mastra's resourceId).
const defaultResource = "default"

type chatSignals struct {
	Draft string `json:"draft"`
	Title string `json:"title"`
	Model string `json:"model"`
	// Attached is the composer's files (see parseAttached).
	Attached string `json:"attached"`
}

func (s *Server) readSignals(w http.ResponseWriter, r *http.Request) (chatSignals, bool) {
	var sig chatSignals
	if err := datastar.ReadSignals(r, &sig); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: read signals: %v", errBadRequest, err))
		return sig, false
	}
	return sig, true
}

// send posts the draft. The thread's stream shows the message and the reply;
// this answer only reports a failure (or clears an old one).
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	sig, ok := s.readSignals(w, r)
	if !ok {
		return
	}
	threadID := r.PathValue("id")
	files, err := s.sendFiles(r, sig.Attached)
	switch {
	case err != nil:
	case r.URL.Query().Get("queue") == "1":
		// After the reply being written (and any turn queued before).
		_, _, err = s.rt.QueueMessage(r.Context(), sig.Draft, agentcore.SignalTarget{ThreadID: threadID}, files...)
	default:
		// The runtime decides, under the chat's lane: read by the run in
		// progress at its next step, the answer to the call its run waits
		// on (an approval is denied with it as the reason), or a new run.
		_, err = s.rt.Say(r.Context(), agentcore.SendRequest{ThreadID: threadID, Text: sig.Draft, Files: files})
	}
	msg := ""
	if err != nil {
		msg = "Not sent: " + err.Error()
		if errors.Is(err, agentcore.ErrBusy) {
			msg = "Not sent: " + agentcore.ErrBusy.Error() + "."
		}
	}
	sse := datastar.NewSSE(w, r)
	_ = sse.PatchElementTempl(components.ComposerError(msg))
	if err != nil {
		// Give the text back so nothing typed is lost (the files stay).
		_ = sse.MarshalAndPatchSignals(map[string]string{"draft": sig.Draft})
	} else if sig.Attached != "" {
		_ = sse.MarshalAndPatchSignals(map[string]string{"attached": ""})
		_ = sse.PatchElementTempl(components.AttachChips(nil))
	}
}

// unsend takes back a message the agent has not read yet and puts its
// text back in the composer, to edit and send again.
func (s *Server) unsend(w http.ResponseWriter, r *http.Request) {
	sig, err := s.rt.Unsend(r.Context(), r.PathValue("id"), r.PathValue("msg"))
	sse := datastar.NewSSE(w, r)
	if err != nil {
		msg := "Not taken back: " + err.Error()
		if errors.Is(err, agentcore.ErrAlreadyRead) {
			msg = "Not taken back: the agent has already read that message."
		}
		_ = sse.PatchElementTempl(components.ComposerError(msg))
		return
	}
	_ = sse.PatchElementTempl(components.ComposerError(""))
	var files []composerFile
	for _, f := range sig.Files {
		if ref, ok := f.FileRef(); ok {
			files = append(files, composerFile{ref: ref, name: f.Filename})
		}
	}
	_ = sse.MarshalAndPatchSignals(map[string]string{"draft": sig.Contents, "attached": formatAttached(files)})
	_ = sse.PatchElementTempl(components.AttachChips(s.attachments(r, files)))
}

// retry answers again after the chat's last reply failed or was stopped;
// the stream shows the new reply, this answer only reports a refusal.
func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	_, err := s.rt.Retry(r.Context(), r.PathValue("id"))
	msg := ""
	if err != nil {
		msg = "Not retried: " + err.Error()
	}
	_ = datastar.NewSSE(w, r).PatchElementTempl(components.ComposerError(msg))
}

// messageText answers a message's text as stored (a reply's Markdown), for
// the Copy button.
func (s *Server) messageText(w http.ResponseWriter, r *http.Request) {
	m, err := s.rt.GetMessage(r.Context(), r.PathValue("msg"))
	if err == nil && m.ThreadID != r.PathValue("id") {
		err = fmt.Errorf("message %s is not in chat %s: %w", m.ID, r.PathValue("id"), agentcore.ErrNotFound)
	}
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, m.Content.Text())
}

// stopWait bounds how long a Stop request waits for the run to wind down;
// a run that takes longer (a tool slow to notice) ends on its own.
const stopWait = 10 * time.Second

func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), stopWait)
	defer cancel()
	s.rt.Stop(ctx, r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) rename(w http.ResponseWriter, r *http.Request) {
	sig, ok := s.readSignals(w, r)
	if !ok {
		return
	}
	title := strings.Join(strings.Fields(sig.Title), " ")
	if title == "" {
		s.httpError(w, r, fmt.Errorf("%w: the title is empty", errBadRequest))
		return
	}
	if _, err := s.rt.UpdateThread(r.Context(), r.PathValue("id"), agentcore.ThreadPatch{Title: &title}); err != nil {
		s.httpError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) pin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, err := s.rt.GetThread(ctx, r.PathValue("id"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	pinned := !t.Pinned
	if _, err := s.rt.UpdateThread(ctx, t.ID, agentcore.ThreadPatch{Pinned: &pinned}); err != nil {
		s.httpError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setModel(w http.ResponseWriter, r *http.Request) {
	sig, ok := s.readSignals(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t, err := s.rt.GetThread(ctx, r.PathValue("id"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	model := strings.TrimSpace(sig.Model)
	sse := datastar.NewSSE(w, r)
	if err := s.cfg.CheckModel(model); err != nil {
		_ = sse.PatchElementTempl(components.ComposerError(fmt.Sprintf("Model %q cannot be used: %v", model, err)))
		_ = sse.MarshalAndPatchSignals(map[string]string{"model": s.threadModel(t)})
		return
	}
	if model == s.threadModel(t) {
		_ = sse.PatchElementTempl(components.ComposerError(""))
		return // unchanged: a repeated change event writes nothing
	}
	if err := s.chats().SetModel(ctx, t.ID, model); err != nil {
		_ = sse.PatchElementTempl(components.ComposerError("Model not changed: " + err.Error()))
		return
	}
	_ = sse.PatchElementTempl(components.ComposerError(""))
}

// deleteThread puts the chat in the trash: gone from every view at once,
// restorable for agentcore.TrashKeep (the page's Undo), then deleted for
// good. A form post (no script) lands on the new-chat screen.
func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), stopWait)
	defer cancel()
	if err := s.rt.TrashThread(ctx, r.PathValue("id")); err != nil {
		s.httpError(w, r, err)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// restoreThread is a deleted chat's Undo; 404 once it is deleted for good.
func (s *Server) restoreThread(w http.ResponseWriter, r *http.Request) {
	if err := s.rt.RestoreThread(r.Context(), r.PathValue("id")); err != nil {
		s.httpError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// codeCSS is the highlighting stylesheet, built once.
var codeCSS = sync.OnceValue(func() string { return markdown.CodeCSS() })

// answer resumes a suspended call with the user's answer (a question's
// answer, a plan decision). The stream shows the outcome; this answer only
// reports a failure.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Answer json.RawMessage `json:"answer"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAnswerBytes)).Decode(&body); err != nil || len(body.Answer) == 0 {
		s.httpError(w, r, fmt.Errorf("%w: want {\"answer\": …}", errBadRequest))
		return
	}
	err := s.chats().Answer(r.Context(), r.PathValue("id"), r.PathValue("call"), body.Answer)
	msg := ""
	if err != nil {
		msg = "Not answered: " + err.Error()
	}
	sse := datastar.NewSSE(w, r)
	_ = sse.PatchElementTempl(components.ComposerError(msg))
}

// maxAnswerBytes bounds an answer: a question's reply, or plan feedback.
const maxAnswerBytes = 1 << 20

// setThinking sets how hard the model thinks in a chat: {thinking: "" |
// "off" | "low" | "medium" | "high"} ("" is the model's default).
func (s *Server) setThinking(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Thinking *string `json:"thinking"`
	}
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body)
	var level llm.Thinking
	ok := err == nil && body.Thinking != nil
	if ok {
		level, ok = llm.ParseThinking(*body.Thinking)
	}
	if !ok {
		s.httpError(w, r, fmt.Errorf("%w: want {\"thinking\": \"off\" | \"low\" | \"medium\" | \"high\" | \"\"}", errBadRequest))
		return
	}
	s.settingDone(w, r, s.chats().SetThinking(r.Context(), r.PathValue("id"), level))
}

// chatThinking is the header's Thinking control for a chat: its level, and
// whether the chat's model is known to have no reasoning (the control is
// hidden then).
func (s *Server) chatThinking(t agentcore.Thread) (level string, hidden bool) {
	info, known := llm.Lookup(s.threadModel(t))
	return string(chat.Of(t).Thinking), known && !info.Reasoning
}

// setMode switches a thread between Build and Plan.
func (s *Server) setMode(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Mode string `json:"mode"`
	}
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body)
	mode, bad := chat.ParseMode(body.Mode)
	if err != nil || bad != nil {
		s.httpError(w, r, fmt.Errorf("%w: want {\"mode\": \"plan\" | \"build\"}", errBadRequest))
		return
	}
	s.settingDone(w, r, s.chats().SetMode(r.Context(), r.PathValue("id"), mode))
}

// setYOLO turns a thread's YOLO switch on or off.
func (s *Server) setYOLO(w http.ResponseWriter, r *http.Request) {
	var body struct {
		On *bool `json:"on"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil || body.On == nil {
		s.httpError(w, r, fmt.Errorf("%w: want {\"on\": true | false}", errBadRequest))
		return
	}
	s.settingDone(w, r, s.chats().SetYOLO(r.Context(), r.PathValue("id"), *body.On))
}

// settingDone answers a change of a chat's setting: nothing, or its
// failure.
func (s *Server) settingDone(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// chats are the chat rules over the server's runtime.
func (s *Server) chats() *chat.Chats { return chat.New(s.rt) }

// setWorkspace sets the folder a thread's tools work in: {path} from the
// page, or {pick: true} to choose it with the desktop's folder picker. The
// folder must exist.
func (s *Server) setWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Path string `json:"path"`
		Pick bool   `json:"pick"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8192)).Decode(&body); err != nil {
		s.httpError(w, r, fmt.Errorf("%w: want {\"path\": …} or {\"pick\": true}", errBadRequest))
		return
	}
	path := strings.TrimSpace(body.Path)
	if body.Pick {
		if s.cfg.PickFolder == nil {
			s.httpError(w, r, fmt.Errorf("%w: no folder picker here: give a path", errBadRequest))
			return
		}
		var err error
		if path, err = s.cfg.PickFolder(r.Context()); err != nil {
			s.httpError(w, r, err)
			return
		}
		if path == "" {
			w.WriteHeader(http.StatusNoContent) // cancelled
			return
		}
	}
	// The picker's answer comes back to the page as a Datastar patch; the
	// folder dialog (dialogs.js) reads a status and the reason as text.
	fromPage := r.Header.Get("Datastar-Request") == "true"
	refuse := func(why string) {
		if !fromPage {
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		_ = datastar.NewSSE(w, r).PatchElementTempl(components.ComposerError(why))
	}
	if !filepath.IsAbs(path) {
		refuse(fmt.Sprintf("Workspace not changed: %q is not an absolute folder path.", path))
		return
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		refuse(fmt.Sprintf("Workspace not changed: %s is not a folder that exists.", path))
		return
	}
	if err := s.chats().SetWorkspace(r.Context(), r.PathValue("id"), filepath.Clean(path)); err != nil {
		refuse("Workspace not changed: " + err.Error())
		return
	}
	if !fromPage {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	_ = datastar.NewSSE(w, r).PatchElementTempl(components.ComposerError(""))
}
