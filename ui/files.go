package ui

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/app/attach"
	"parley/components"
)

// Files a user attaches. The composer uploads each file as soon as it is
// picked, dropped or pasted (POST /files, multipart, with the list so far);
// the server checks it (app/attach), stores it, and answers with the new
// list (the attached signal) and its chips. Send reads the list back and
// checks it again: it is the page's, so it is not trusted either.

// maxUploadBody bounds one upload request: one image at its limit and a
// few more files' worth of form.
const maxUploadBody = attach.MaxMessageBytes + 1<<16

// maxSignalsBody bounds a removal's signals: the draft and the list.
const maxSignalsBody = 1 << 20

// composerFile is one entry of the attached signal: "<sha256>/<name>",
// one per line (a name has neither "/" nor control characters).
type composerFile struct{ ref, name string }

func parseAttached(s string) []composerFile {
	var out []composerFile
	// A form sends the hidden input's line breaks as CRLF.
	for line := range strings.SplitSeq(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		ref, name, ok := strings.Cut(line, "/")
		if ok {
			out = append(out, composerFile{ref, name})
		}
	}
	return out
}

func formatAttached(files []composerFile) string {
	lines := make([]string, len(files))
	for i, f := range files {
		lines[i] = f.ref + "/" + f.name
	}
	return strings.Join(lines, "\n")
}

// filesRoutes registers the upload, the removal from the composer and the
// files themselves.
func (s *Server) filesRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /files", s.uploadFiles)
	mux.HandleFunc("POST /files/forget", s.forgetFile)
	mux.HandleFunc("GET /files/{ref}", s.serveFile)
}

// uploadFiles checks and stores the files of a multipart form and answers
// with the composer's new list; a file refused is named in the composer's
// error line and nothing of it is stored.
func (s *Server) uploadFiles(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody)
	mr, err := r.MultipartReader()
	if err != nil {
		s.httpError(w, r, fmt.Errorf("%w: files come as multipart/form-data: %v", errBadRequest, err))
		return
	}
	var files []composerFile
	var refused []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			refused = append(refused, uploadError(err))
			break
		}
		switch p.FormName() {
		case "attached":
			b, _ := io.ReadAll(io.LimitReader(p, 1<<16))
			files = append(files, parseAttached(string(b))...)
		case "file":
			f, err := s.storeUpload(r, p, files)
			if err != nil {
				refused = append(refused, err.Error())
				continue
			}
			files = append(files, f)
		}
		p.Close()
	}
	s.answerFiles(w, r, files, strings.Join(refused, " "))
}

// storeUpload checks one uploaded file against the files already in the
// composer and stores it.
func (s *Server) storeUpload(r *http.Request, p *multipart.Part, have []composerFile) (composerFile, error) {
	// The name as sent: multipart's FileName keeps only its last element,
	// and a name with a path in it is refused, not quietly shortened.
	_, params, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	name := params["filename"]
	data, err := io.ReadAll(io.LimitReader(p, attach.MaxImageBytes+1))
	if err != nil {
		return composerFile{}, errors.New(uploadError(err))
	}
	f, err := attach.Check(name, p.Header.Get("Content-Type"), data)
	if err != nil {
		return composerFile{}, errors.New(refusal(err))
	}
	sizes := []int64{int64(len(data))}
	for _, h := range have {
		if _, n, err := s.rt.FileInfo(r.Context(), h.ref); err == nil {
			sizes = append(sizes, n)
		}
	}
	if err := attach.CheckMessage(sizes); err != nil {
		return composerFile{}, fmt.Errorf("%q was not added: %s", name, refusal(err))
	}
	ref, err := s.rt.PutFile(r.Context(), f.MediaType, f.Data)
	if err != nil {
		s.log.Error("store an attached file", "err", err)
		return composerFile{}, fmt.Errorf("%q could not be stored: %v", name, err)
	}
	return composerFile{ref: ref, name: f.Name}, nil
}

// refusal is attach's reason without its sentinel's words, as a sentence.
func refusal(err error) string {
	msg, _ := strings.CutPrefix(err.Error(), attach.ErrRefused.Error()+": ")
	return msg + "."
}

func uploadError(err error) string {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return fmt.Sprintf("The files were not all added: one upload may hold %s at most.", attach.Size(tooBig.Limit))
	}
	return "The files were not all added: " + err.Error() + "."
}

// forgetFile takes a file out of the composer's list; the file itself goes
// later if no message uses it.
func (s *Server) forgetFile(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSignalsBody)
	sig, ok := s.readSignals(w, r)
	if !ok {
		return
	}
	ref := r.URL.Query().Get("ref")
	var files []composerFile
	for _, f := range parseAttached(sig.Attached) {
		if f.ref != ref {
			files = append(files, f)
		}
	}
	s.answerFiles(w, r, files, "")
}

// answerFiles sets the composer's list and its chips, and its error line.
func (s *Server) answerFiles(w http.ResponseWriter, r *http.Request, files []composerFile, msg string) {
	sse := datastar.NewSSE(w, r)
	_ = sse.MarshalAndPatchSignals(map[string]string{"attached": formatAttached(files)})
	_ = sse.PatchElementTempl(components.AttachChips(s.attachments(r, files)))
	_ = sse.PatchElementTempl(components.ComposerError(msg))
}

// attachments are the chips of the composer's files that are stored.
func (s *Server) attachments(r *http.Request, files []composerFile) []components.Attachment {
	out := make([]components.Attachment, 0, len(files))
	for _, f := range files {
		mt, n, err := s.rt.FileInfo(r.Context(), f.ref)
		if err != nil {
			continue
		}
		out = append(out, components.Attachment{Ref: f.ref, Name: f.name, Size: attach.Size(n), Image: strings.HasPrefix(mt, "image/")})
	}
	return out
}

// sendFiles turns the composer's list into file parts, checking each entry
// again: a stored file, a plain name, the message's limits.
func (s *Server) sendFiles(r *http.Request, attached string) ([]agentcore.Part, error) {
	var parts []agentcore.Part
	var sizes []int64
	for _, f := range parseAttached(attached) {
		mt, n, err := s.rt.FileInfo(r.Context(), f.ref)
		if err != nil {
			return nil, fmt.Errorf("the file %q is not stored: add it again", f.name)
		}
		if err := attach.CheckName(f.name); err != nil {
			return nil, errors.New(refusal(err))
		}
		p := agentcore.Part{Type: "file", Data: agentcore.FileURL(f.ref), MimeType: mt, Filename: f.name, Size: n}
		if _, ok := p.FileRef(); !ok {
			return nil, fmt.Errorf("the file %q is not stored: add it again", f.name)
		}
		parts, sizes = append(parts, p), append(sizes, n)
	}
	if err := attach.CheckMessage(sizes); err != nil {
		return nil, errors.New(refusal(err))
	}
	return parts, nil
}

// serveFile answers a stored file by its SHA-256, as the type it was
// checked to be, never run: no sniffing, a sandbox, nothing it may load.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("ref")
	if _, ok := (agentcore.Part{Type: "file", Data: agentcore.FileURL(ref)}).FileRef(); !ok {
		s.httpError(w, r, fmt.Errorf("%w: %.80q is not a file's SHA-256", errBadRequest, ref))
		return
	}
	f, err := s.rt.GetFile(r.Context(), ref)
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.MediaType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
	// A browser's PDF viewer does not run in a sandbox: a PDF is saved,
	// not shown.
	if f.MediaType == "application/pdf" {
		h.Set("Content-Disposition", "attachment; filename=document.pdf")
	} else {
		h.Set("Content-Disposition", "inline")
	}
	h.Set("Cache-Control", "private, max-age=31536000, immutable") // the bytes of a SHA-256 never change
	_, _ = w.Write(f.Data)
}

// messageFiles are the chips of a message's file parts.
func messageFiles(c agentcore.Content) []components.Attachment {
	var out []components.Attachment
	for _, p := range c.Parts {
		if ref, ok := p.FileRef(); ok {
			out = append(out, components.Attachment{Ref: ref, Name: p.Filename, Size: attach.Size(p.Size),
				Image: strings.HasPrefix(p.MimeType, "image/")})
		}
	}
	return out
}
