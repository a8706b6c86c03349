package agentcore_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// A message with an image and a text file: the image goes to the model as
// an image part of the same user message, the text file as text with its
// name, and both stay in the message for every later request; a file gone
// from the store is named to the model instead.
func TestFilesReachTheModel(t *testing.T) {
	rt, srv, db := newRuntimeDB(t)
	th := thread(t, rt)
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	pngRef, err := db.PutFile(t.Context(), "image/png", img.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	textRef, err := db.PutFile(t.Context(), "text/plain; charset=utf-8", []byte("func main() {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	files := []agentcore.Part{
		{Type: "file", Data: agentcore.FileURL(pngRef), MimeType: "image/png", Filename: "shot.png", Size: int64(img.Len())},
		{Type: "file", Data: agentcore.FileURL(textRef), MimeType: "text/plain; charset=utf-8", Filename: "main.go", Size: 15},
	}
	srv.Push(scripted.Reply{Text: "I see a grey image."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "what is this?", Files: files}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	body := gjson.ParseBytes(srv.Requests()[0].Body)
	user := body.Get(`messages.#(role=="user")#`).Array()
	last := user[len(user)-1].Get("content")
	if got := last.Get("0.text").String(); got != "what is this?\n\n<file name=\"main.go\">\nfunc main() {}\n\n</file>" {
		t.Errorf("the user message's text part is %q", got)
	}
	url := last.Get(`#(type=="image_url").image_url.url`).String()
	if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img.Bytes()); url != want {
		t.Errorf("the image part's url is %.60q…, want the PNG as a data URL", url)
	}
	// The stored message keeps its files as Mastra v2 file parts.
	msgs := messages(t, rt, th.ID)
	if got := msgs[0].Content.Parts; len(got) != 3 || got[1].Filename != "shot.png" || got[2].Data != "/files/"+textRef {
		t.Errorf("stored parts: %+v", got)
	}

	// An image alone, no text: no empty text part goes (Anthropic refuses one).
	srv.Push(scripted.Reply{Text: "ok"})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Files: files[:1]}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, rt, th.ID)
	reqs := srv.Requests()
	lastUser := gjson.GetBytes(reqs[len(reqs)-1].Body, `messages.#(role=="user")#|@reverse|0.content`)
	if n := len(lastUser.Array()); n != 1 || lastUser.Get("0.type").String() != "image_url" {
		t.Errorf("an image alone went as %s", lastUser.Raw[:min(200, len(lastUser.Raw))])
	}
	// The first message's image went again, as it must on every request.
	if !strings.Contains(string(reqs[len(reqs)-1].Body), base64.StdEncoding.EncodeToString(img.Bytes())) {
		t.Error("the earlier image was not sent again")
	}
}

// Files are refused before anything is stored or sent: a part that names
// no stored file, an image for a model known to read none.
func TestFilesRefused(t *testing.T) {
	rt, _, _ := newRuntimeDB(t)
	th := thread(t, rt)
	bad := []agentcore.Part{{Type: "file", Data: "/files/../../etc/passwd", MimeType: "image/png", Filename: "x.png"}}
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Files: bad}); err == nil ||
		!strings.Contains(err.Error(), `the file "x.png" is not a stored file`) {
		t.Errorf("a file part naming a path: %v", err)
	}
	img := []agentcore.Part{{Type: "file", Data: agentcore.FileURL(strings.Repeat("a", 64)), MimeType: "image/png", Filename: "x.png"}}
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Files: img, Model: "openai/o3-mini"}); err == nil ||
		!strings.Contains(err.Error(), `openai/o3-mini does not read images: choose a model that does, or remove "x.png"`) {
		t.Errorf("an image for o3-mini: %v", err)
	}
	if n := len(messages(t, rt, th.ID)); n != 0 {
		t.Errorf("%d messages stored by refused sends", n)
	}
}

// Files sent while a reply is written go with the message the agent reads
// at its next step (or the turn after): stored with the signal, sent to
// the model as image parts; taken back unread, they are kept for the
// composer.
func TestFilesWhileReplying(t *testing.T) {
	rt, srv, db := newRuntimeDB(t)
	th := thread(t, rt)
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 5))); err != nil {
		t.Fatal(err)
	}
	ref, err := db.PutFile(t.Context(), "image/png", img.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	files := []agentcore.Part{{Type: "file", Data: agentcore.FileURL(ref), MimeType: "image/png", Filename: "late.png", Size: int64(img.Len())}}
	srv.Push(scripted.Reply{Text: "slow reply in many pieces", Delay: 50 * time.Millisecond})
	srv.Push(scripted.Reply{Text: "I see the late image."})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	said, err := rt.Say(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "and this", Files: files})
	if err != nil || said.Action != agentcore.Deliver {
		t.Fatalf("Say with a file while replying: %+v, %v", said, err)
	}
	waitIdle(t, rt, th.ID)
	deadline := time.Now().Add(5 * time.Second)
	for len(srv.Requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	waitIdle(t, rt, th.ID)
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img.Bytes())
	seen := false
	for _, r := range srv.Requests() {
		seen = seen || strings.Contains(string(r.Body), want)
	}
	if !seen {
		t.Errorf("no request carried the image sent while replying (%d requests)", len(srv.Requests()))
	}
	var stored bool
	for _, m := range messages(t, rt, th.ID) {
		if s, ok := agentcore.SignalOf(m); ok && len(s.Files) == 1 && s.Files[0].Filename == "late.png" {
			stored = true
		}
	}
	if !stored {
		t.Error("the signal was not stored with its file")
	}
}

// A turn queued with a file and taken back before it was read gives the
// file back, still stored, for the composer.
func TestUnsendKeepsFiles(t *testing.T) {
	rt, srv, db := newRuntimeDB(t)
	th := thread(t, rt)
	ref, err := db.PutFile(t.Context(), "text/plain; charset=utf-8", []byte("notes"))
	if err != nil {
		t.Fatal(err)
	}
	files := []agentcore.Part{{Type: "file", Data: agentcore.FileURL(ref), MimeType: "text/plain; charset=utf-8", Filename: "n.txt", Size: 5}}
	srv.Push(scripted.Reply{Text: "a slow reply in several pieces", Delay: 80 * time.Millisecond})
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	_, sig, err := rt.QueueMessage(t.Context(), "", agentcore.SignalTarget{ThreadID: th.ID}, files...)
	if err != nil {
		t.Fatal(err)
	}
	back, err := rt.Unsend(t.Context(), th.ID, sig.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Files) != 1 || back.Files[0].Filename != "n.txt" {
		t.Errorf("taken back with files %+v", back.Files)
	}
	if _, _, err := db.FileInfo(t.Context(), ref); err != nil {
		t.Errorf("the file after its message was taken back: %v", err)
	}
	waitIdle(t, rt, th.ID)
}
