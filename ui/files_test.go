package ui

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"parley/agentcore"
)

type upload struct {
	name, mediaType string
	data            []byte
}

// postFiles uploads files as the composer's attach form does, with the
// list so far.
func postFiles(t *testing.T, h http.Handler, attached string, files ...upload) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := mw.WriteField("attached", attached); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		hdr := textproto.MIMEHeader{}
		// The raw name, as a hostile client may send it (Go's writer would
		// escape quotes, not slashes).
		hdr.Set("Content-Disposition", `form-data; name="file"; filename="`+strings.ReplaceAll(f.name, `"`, `\"`)+`"`)
		hdr.Set("Content-Type", f.mediaType)
		pw, err := mw.CreatePart(hdr)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(f.data)
	}
	mw.Close()
	r := httptest.NewRequest("POST", "/files", &body)
	r.Host = "127.0.0.1:7777"
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Datastar-Request", "true")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// attachedOf reads the attached signal an answer sets.
func attachedOf(t *testing.T, body string) string {
	t.Helper()
	for line := range strings.SplitSeq(body, "\n") {
		if js, ok := strings.CutPrefix(line, "data: signals "); ok {
			var sig struct{ Attached string }
			if err := json.Unmarshal([]byte(js), &sig); err != nil {
				t.Fatal(err)
			}
			return sig.Attached
		}
	}
	t.Fatalf("no signals in %s", body)
	return ""
}

// The attach routes take files from outside: a hostile name, a lying type,
// a truncated image are refused by name with nothing stored; a name with
// markup is shown escaped; the files are served as the type they were
// checked to be, sandboxed; a send carries them as file parts, and the
// message shows them.
func TestAttachRoutesHostile(t *testing.T) {
	s, db, _ := testServerOn(t, nil)
	h := s.Handler()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 5, 4))); err != nil {
		t.Fatal(err)
	}
	const markup = `<img src=x onerror=alert(1)>.png`
	w := postFiles(t, h, "",
		upload{"../../x", "text/plain", []byte("hi")},
		upload{"lie.png", "image/png", []byte("<html><script>alert(1)</script>")},
		upload{"cut.png", "image/png", img.Bytes()[:40]},
		upload{markup, "image/png", img.Bytes()},
		upload{"notes.md", "text/markdown", []byte("# notes\n")},
	)
	body := w.Body.String()
	for _, want := range []string{
		`&#34;../../x&#34; is a path, not a file name.`,
		`&#34;lie.png&#34; says it is image/png, but its content is text/html.`,
		`&#34;cut.png&#34; is not a whole PNG image`,
		`&lt;img src=x onerror=alert(1)&gt;.png`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the upload's answer lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<img src=x") || strings.Contains(body, "<script>") {
		t.Fatalf("markup from a file reached the page:\n%s", body)
	}
	attached := attachedOf(t, body)
	list := parseAttached(attached)
	if len(list) != 2 || list[0].name != markup || list[1].name != "notes.md" {
		t.Fatalf("the composer's files after the upload: %q", attached)
	}
	var stored int
	for _, f := range list {
		if _, _, err := s.rt.FileInfo(t.Context(), f.ref); err == nil {
			stored++
		}
	}
	if stored != 2 {
		t.Errorf("%d of the 2 accepted files stored", stored)
	}

	// Served as checked: the image as image/png, never sniffed, sandboxed.
	w = do(h, "GET", "/files/"+list[0].ref, nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/png" || w.Header().Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(w.Header().Get("Content-Security-Policy"), "sandbox") || !bytes.Equal(w.Body.Bytes(), img.Bytes()) {
		t.Errorf("GET the image: %d %v", w.Code, w.Header())
	}
	// A PDF is saved, not shown: no browser viewer runs in the sandbox.
	pdf, err := s.rt.PutFile(t.Context(), "application/pdf", []byte("%PDF-1.4 stand-in bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if w := do(h, "GET", "/files/"+pdf, nil); w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		t.Errorf("GET a PDF: %d %v", w.Code, w.Header())
	}
	for _, bad := range []string{"../../etc/passwd", strings.Repeat("A", 64), "%3Cscript%3E"} {
		if w := do(h, "GET", "/files/"+bad, nil); w.Code == 200 {
			t.Errorf("GET /files/%s: %d", bad, w.Code)
		}
	}

	// Removing one from the composer.
	sigs, _ := json.Marshal(map[string]string{"draft": "x", "attached": strings.ReplaceAll(attached, "\n", "\r\n")})
	r := httptest.NewRequest("POST", "/files/forget?ref="+list[1].ref, bytes.NewReader(sigs))
	r.Host = "127.0.0.1:7777"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Datastar-Request", "true")
	fw := httptest.NewRecorder()
	h.ServeHTTP(fw, r)
	if got := attachedOf(t, fw.Body.String()); got != list[0].ref+"/"+markup {
		t.Errorf("after removing notes.md the composer has %q", got)
	}

	// Sending: a forged list is refused by name; the real one becomes the
	// message's file parts.
	ctx := t.Context()
	th, _ := db.CreateThread(ctx, agentcore.Thread{ResourceID: defaultResource})
	send := func(sig map[string]any) string {
		b, _ := json.Marshal(sig)
		r := httptest.NewRequest("POST", "/t/"+th.ID+"/send", bytes.NewReader(b))
		r.Host = "127.0.0.1:7777"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Datastar-Request", "true")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.String()
	}
	if got := send(map[string]any{"draft": "", "attached": strings.Repeat("b", 64) + "/ghost.png"}); !strings.Contains(got, "Not sent: the file &#34;ghost.png&#34; is not stored: add it again") {
		t.Errorf("a forged file: %s", got)
	}
	if got := send(map[string]any{"draft": "", "attached": list[0].ref + "/../../x"}); !strings.Contains(got, "is a path, not a file name") {
		t.Errorf("a forged name: %s", got)
	}
	if got := send(map[string]any{"draft": "look", "attached": attached}); strings.Contains(got, "Not sent") || !strings.Contains(got, `"attached":""`) {
		t.Fatalf("sending with files: %s", got)
	}
	ms, err := db.ListMessages(ctx, th.ID, agentcore.MessageQuery{})
	if err != nil || len(ms) == 0 {
		t.Fatalf("messages: %v %v", ms, err)
	}
	parts := ms[0].Content.Parts
	if len(parts) != 3 || parts[1].Filename != markup || parts[1].MimeType != "image/png" || parts[2].Filename != "notes.md" ||
		parts[2].Size != 8 {
		t.Fatalf("the sent message's parts: %+v", parts)
	}
	v := s.messageView(ms[0], agentcore.Live{}, false, nil)
	if len(v.Files) != 2 || !v.Files[0].Image || v.Files[1].Image || v.Files[1].Size != "8 B" {
		t.Errorf("the message's chips: %+v", v.Files)
	}
}

// A chat's files go out in its JSON export and come back with it, after
// the chat and its files were deleted.
func TestExportImportKeepsFiles(t *testing.T) {
	s, db, _ := testServerOn(t, nil)
	ctx := t.Context()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 6, 6))); err != nil {
		t.Fatal(err)
	}
	ref, err := db.PutFile(ctx, "image/png", img.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	th, _ := db.CreateThread(ctx, agentcore.Thread{ResourceID: defaultResource, Title: "with a file"})
	c := agentcore.TextContent("see")
	c.Parts = append(c.Parts, agentcore.Part{Type: "file", Data: agentcore.FileURL(ref), MimeType: "image/png", Filename: "a.png",
		Size: int64(img.Len())})
	if _, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: c}); err != nil {
		t.Fatal(err)
	}
	body, _, err := s.exportFile(ctx, th.ID, "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetFile(ctx, ref); err == nil {
		t.Fatal("the file outlived its only chat")
	}
	res, err := s.importData(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	f, err := db.GetFile(ctx, ref)
	if err != nil || !bytes.Equal(f.Data, img.Bytes()) {
		t.Fatalf("the imported file: %v", err)
	}
	ms, _ := db.ListMessages(ctx, res.Threads[0].ID, agentcore.MessageQuery{})
	if v := s.messageView(ms[0], agentcore.Live{}, false, nil); len(v.Files) != 1 || v.Files[0].Ref != ref || !v.Files[0].Image {
		t.Errorf("the imported message's files: %+v", v.Files)
	}
}
