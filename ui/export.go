package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/components"
	"parley/ui/exchange"
)

const (
	// MaxImportBytes bounds an imported file. A Parley export of a long
	// thread and a few years of ChatGPT history fit; the file is read
	// whole into memory before anything is stored.
	MaxImportBytes = 32 << 20
	// maxImportDrain is how much of a too-large upload is read and thrown
	// away so the browser, still sending, gets the answer instead of a
	// reset connection.
	maxImportDrain = 1 << 30
	// multipartSlack is room for the form's boundaries and headers.
	multipartSlack = 64 << 10
)

// exportThread loads a thread and all its messages, of every branch (the
// one shown Active), for export; the reply being written is taken as it
// stands in memory.
func (s *Server) exportThread(ctx context.Context, id string) (agentcore.Thread, []agentcore.Message, error) {
	t, err := s.rt.GetThread(ctx, id)
	if err != nil {
		return t, nil, err
	}
	msgs, err := s.rt.ListTree(ctx, id)
	if err != nil {
		return t, nil, fmt.Errorf("export thread %s: %w", id, err)
	}
	if live, running := s.rt.Live(id); running {
		for i := range msgs {
			if msgs[i].ID == live.MessageID {
				msgs[i].Content, msgs[i].Status = live.Content, agentcore.StatusStreaming
			}
		}
	}
	return t, msgs, nil
}

// exportFiles are the files msgs carry, for a JSON export. A file no
// longer stored is left out: its message still names it.
func (s *Server) exportFiles(ctx context.Context, msgs []agentcore.Message) (map[string]exchange.StoredFile, error) {
	files := map[string]exchange.StoredFile{}
	for _, m := range msgs {
		for _, p := range m.Content.Parts {
			ref, ok := p.FileRef()
			if _, done := files[ref]; !ok || done {
				continue
			}
			f, err := s.rt.GetFile(ctx, ref)
			if errors.Is(err, agentcore.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("export the file %q: %w", p.Filename, err)
			}
			files[ref] = exchange.StoredFile{MimeType: f.MediaType, Data: f.Data}
		}
	}
	return files, nil
}

// exportFile renders a thread as "md" or "json".
func (s *Server) exportFile(ctx context.Context, id, format string) (body []byte, t agentcore.Thread, err error) {
	t, msgs, err := s.exportThread(ctx, id)
	if err != nil {
		return nil, t, err
	}
	switch format {
	case "md":
		return exchange.Markdown(t, msgs, time.Now()), t, nil
	case "json":
		files, err := s.exportFiles(ctx, msgs)
		if err != nil {
			return nil, t, err
		}
		body, err = exchange.JSON(t, msgs, time.Now(), files)
		return body, t, err
	}
	return nil, t, fmt.Errorf("%w: export format %q: want md or json", errBadRequest, format)
}

// exportPage downloads a thread: GET /t/{id}/export.md and /export.json.
func (s *Server) exportPage(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, t, err := s.exportFile(r.Context(), r.PathValue("id"), format)
		if err != nil {
			s.httpError(w, r, err)
			return
		}
		writeDownload(w, body, t, format)
	}
}

// apiExport is GET /api/memory/threads/{threadId}/export?format=json|markdown:
// the same files as the page's, for clients.
func (s *Server) apiExport(w http.ResponseWriter, r *http.Request) {
	format := "json"
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
	case "md", "markdown":
		format = "md"
	default:
		s.apiFail(w, r, badRequest("format %q: want json or markdown", f))
		return
	}
	body, t, err := s.exportFile(r.Context(), r.PathValue("threadId"), format)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeDownload(w, body, t, format)
}

func writeDownload(w http.ResponseWriter, body []byte, t agentcore.Thread, format string) {
	ctype := "application/json; charset=utf-8"
	if format == "md" {
		ctype = "text/markdown; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment",
		map[string]string{"filename": exportName(t) + "." + format}))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// exportName is a file name from the thread's title: "parley-fix-the-build".
func exportName(t agentcore.Thread) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(t.Title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "parley-chat-" + t.ID
	}
	return "parley-" + b.String()
}

// imported is what an import stored.
type imported struct {
	Kind    exchange.Kind    `json:"kind"`
	Threads []importedThread `json:"threads"`
	Skipped int              `json:"skipped"` // conversations with nothing to import
	// ReplacedIDs counts the file's ids Parley does not accept (see
	// agentcore.ValidID), replaced by new ones; Note says so in words.
	ReplacedIDs int    `json:"replacedIds,omitempty"`
	Note        string `json:"note,omitempty"`
	stored      []agentcore.Thread
}

type importedThread struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Messages int    `json:"messages"`
	// SourceID is the thread's id in the file, when it had to be given a
	// new one (the same file imported twice).
	SourceID string `json:"sourceId,omitempty"`
}

// importData reads a file and stores every thread in it, in one
// transaction.
func (s *Server) importData(ctx context.Context, data []byte) (imported, error) {
	res, err := exchange.Read(data)
	if err != nil {
		return imported{}, &apiError{http.StatusBadRequest, "Not imported: " + err.Error() + "."}
	}
	// The files first: a thread stored without them would show none.
	for ref, f := range res.Files {
		got, err := s.rt.PutFile(ctx, f.MimeType, f.Data)
		if err != nil {
			return imported{}, fmt.Errorf("not imported: %w", err)
		}
		if got != ref {
			return imported{}, fmt.Errorf("not imported: the file %.16s… was stored as %.16s…", ref, got)
		}
	}
	stored, err := s.rt.ImportThreads(ctx, res.Threads)
	if err != nil {
		return imported{}, fmt.Errorf("not imported: %w", err)
	}
	out := imported{Kind: res.Kind, Skipped: res.Skipped, ReplacedIDs: res.ReplacedIDs, stored: stored}
	if n := res.ReplacedIDs; n > 0 {
		out.Note = fmt.Sprintf("%d %s not valid and %s replaced.", n, plural(n, "id was", "ids were"), plural(n, "was", "were"))
	}
	for i, t := range stored {
		it := importedThread{ID: t.ID, Title: t.Title, Messages: len(res.Threads[i].Messages)}
		if src := res.Threads[i].Thread.ID; src != "" && src != t.ID {
			it.SourceID = src
		}
		out.Threads = append(out.Threads, it)
	}
	return out, nil
}

// readUpload reads the file of an import request: the "file" field of a
// multipart form, or the whole body. A file over MaxImportBytes is refused
// by name, after the rest of the upload is drained.
func readUpload(r *http.Request) ([]byte, error) {
	defer func() { _, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxImportDrain)) }()
	tooLarge := &apiError{http.StatusRequestEntityTooLarge,
		fmt.Sprintf("Not imported: the file is larger than the %d MiB import limit.", MaxImportBytes>>20)}
	if r.ContentLength > MaxImportBytes+multipartSlack {
		return nil, tooLarge
	}
	var src io.Reader = r.Body
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "multipart/form-data" {
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, badRequest("Not imported: the upload is not a readable form: %v", err)
		}
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, badRequest("Not imported: the form has no file (a field named \"file\").")
			}
			if err != nil {
				return nil, badRequest("Not imported: the upload was cut short: %v", err)
			}
			if p.FormName() == "file" {
				src = p
				break
			}
		}
	}
	data, err := io.ReadAll(io.LimitReader(src, MaxImportBytes+1))
	if err != nil {
		return nil, badRequest("Not imported: the upload was cut short: %v", err)
	}
	if len(data) > MaxImportBytes {
		return nil, tooLarge
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("Not imported: the file is empty.")
	}
	return data, nil
}

// importPage is POST /import from the sidebar's form. From Datastar it
// answers with the outcome in #import-status (which opens the new chat);
// a plain form post is redirected to it, or gets the reason as text.
func (s *Server) importPage(w http.ResponseWriter, r *http.Request) {
	data, err := readUpload(r)
	var res imported
	if err == nil {
		res, err = s.importData(r.Context(), data)
	}
	if r.Header.Get("Datastar-Request") != "true" {
		if err != nil {
			s.httpError(w, r, err)
			return
		}
		http.Redirect(w, r, components.ThreadURL(res.stored[0].ID), http.StatusSeeOther)
		return
	}
	sse := datastar.NewSSE(w, r)
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			s.log.Error("import", "err", err)
		}
		_ = sse.PatchElementTempl(components.ImportStatus(sentence(err.Error())+" Nothing was changed.", ""))
		return
	}
	msg := fmt.Sprintf("Imported %d %s. ", len(res.Threads), plural(len(res.Threads), "chat", "chats"))
	if res.Note != "" {
		msg += res.Note + " "
	}
	msg += "Opening…"
	_ = sse.PatchElementTempl(components.ImportStatus(msg, components.ThreadURL(newest(res.stored).ID)))
}

// apiImport is POST /api/memory/threads/import: the file as the body (or
// as the "file" field of a form); answers what was stored.
func (s *Server) apiImport(r *http.Request) (any, error) {
	data, err := readUpload(r)
	if err != nil {
		return nil, err
	}
	return s.importData(r.Context(), data)
}

// newest is the most recently updated of the threads: the one to open.
func newest(ts []agentcore.Thread) agentcore.Thread {
	best := ts[0]
	for _, t := range ts[1:] {
		if t.UpdatedAt.After(best.UpdatedAt) {
			best = t
		}
	}
	return best
}

// sentence capitalises the first letter and ends with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
