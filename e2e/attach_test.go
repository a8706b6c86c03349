package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

func testPNG(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Files come in three ways — the 📎 picker, a drop on the chat, a paste in
// the message box — and show as chips; sent, they reach the model (images
// as image parts, a text file as text) and stay on the message after a
// reload and a restart. A file over its limit is refused with the limit
// and nothing stored; a chat's files go when it is deleted.
func TestAttachPickDropPaste(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	waitJS(t, pg, `() => document.querySelector('#attach') !== null`)

	dir := t.TempDir()
	picked := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(picked, []byte("# Notes\nthe picked file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pg.MustElement("#attach-input").MustSetFiles(picked)
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 1`)

	dropped, pasted := testPNG(t, 40, 30, color.RGBA{30, 120, 220, 255}), testPNG(t, 24, 24, color.RGBA{220, 80, 40, 255})
	pg.MustEval(`(b64) => {
		const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], 'dropped.png', {type: 'image/png'}));
		document.getElementById('chat').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	}`, base64.StdEncoding.EncodeToString(dropped))
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 2`)
	pg.MustEval(`(b64) => {
		const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], 'image.png', {type: 'image/png'}));
		document.getElementById('draft').dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
	}`, base64.StdEncoding.EncodeToString(pasted))
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 3`)
	waitJS(t, pg, `() => [...document.querySelectorAll('#attach-chips img.attach-thumb')].every(i => i.complete && i.naturalWidth > 0)`)
	if got := evalString(pg, `() => [...document.querySelectorAll('#attach-chips .attach-name')].map(e => e.innerText).join(',')`); got != "notes.md,dropped.png,image.png" {
		t.Fatalf("the chips are %q", got)
	}
	pg.MustScreenshot(artifact("attach-composer.png"))

	// Over the limit: refused with the limit, nothing stored, the chips stay.
	big := filepath.Join(dir, "big.txt")
	bigData := bytes.Repeat([]byte("all work and no play\n"), 30_000)
	if err := os.WriteFile(big, bigData, 0o644); err != nil {
		t.Fatal(err)
	}
	pg.MustElement("#attach-input").MustSetFiles(big)
	waitJS(t, pg, `() => document.querySelector('#composer-error')?.innerText.includes('a text file may be 512 KB at most')`)
	sum := sha256.Sum256(bigData)
	if _, _, err := p.In.Runtime.FileInfo(context.Background(), hex.EncodeToString(sum[:])); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("the refused file: %v", err)
	}
	if n := pg.MustEval(`() => document.querySelectorAll('#attach-chips .attach-chip').length`).Int(); n != 3 {
		t.Fatalf("%d chips after a refusal", n)
	}

	// Remove one, send the rest.
	pg.MustElement(`#attach-chips .attach-remove[aria-label="Remove image.png"]`).MustClick()
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 2`)
	p.Model.Push(scripted.Reply{Text: "A blue picture and your notes."})
	sendMsg(t, pg, "what are these?")
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('A blue picture')`)
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 0`)
	reqs := p.Model.Requests()
	users := gjson.GetBytes(reqs[len(reqs)-1].Body, `messages.#(role=="user")#`).Array()
	content := users[len(users)-1].Get("content")
	if text := content.Get("0.text").String(); !strings.HasPrefix(text, "what are these?") || !strings.Contains(text, "<file name=\"notes.md\">\n# Notes\nthe picked file\n") {
		t.Errorf("the model read %q", text)
	}
	if url := content.Get(`#(type=="image_url").image_url.url`).String(); url != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(dropped) {
		t.Errorf("the image went as %.80q", url)
	}

	sent := `#messages .msg-user .msg-files`
	waitJS(t, pg, `(s) => [...document.querySelectorAll(s + ' .attach-name')].map(e => e.innerText).join(',') === 'notes.md,dropped.png'`, sent)
	pg.MustScreenshot(artifact("attach-sent.png"))
	pg.MustReload()
	pg.MustWaitLoad()
	waitJS(t, pg, `(s) => document.querySelectorAll(s + ' .attach-chip').length === 2`, sent)

	p = p.restart()
	pg = p.page("/t/" + id)
	waitJS(t, pg, `(s) => [...document.querySelectorAll(s + ' img.attach-thumb')].some(i => i.complete && i.naturalWidth === 40)`, sent)
	href := evalString(pg, `(s) => document.querySelector(s + ' a.attach-chip').getAttribute('href')`, sent)

	// Exported, the chat carries its files.
	resp, err := http.Get(p.URL + "/t/" + id + "/export.json")
	if err != nil {
		t.Fatal(err)
	}
	export, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !gjson.GetBytes(export, "files."+strings.TrimPrefix(href, "/files/")+".data").Exists() {
		t.Fatalf("the export (%d) lacks the image: %.300s", resp.StatusCode, export)
	}

	// Deleting the chat takes its files with it.
	if err := p.In.Runtime.DeleteThread(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.In.Runtime.FileInfo(context.Background(), strings.TrimPrefix(href, "/files/")); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("the chat's file after the chat was deleted: %v", err)
	}

	// Imported again, it has them back.
	file := filepath.Join(dir, "chat.json")
	if err := os.WriteFile(file, export, 0o600); err != nil {
		t.Fatal(err)
	}
	home := p.page("/")
	home.MustElement("#import-file").MustSetFiles(file)
	waitJS(t, home, `() => location.pathname.startsWith('/t/')`)
	waitJS(t, home, `(s) => [...document.querySelectorAll(s + ' img.attach-thumb')].some(i => i.complete && i.naturalWidth === 40)`, sent)
	if got := evalString(home, `(s) => [...document.querySelectorAll(s + ' .attach-name')].map(e => e.innerText).join(',')`, sent); got != "notes.md,dropped.png" {
		t.Errorf("the imported chat's files: %q", got)
	}
}

// A new chat can start with files: the welcome screen's composer takes
// them as a chat's does, and the first message carries them.
func TestAttachOnWelcome(t *testing.T) {
	p := startParley(t)
	pg := p.page("/")
	waitJS(t, pg, `() => document.querySelector('.welcome #attach') !== null`)
	path := filepath.Join(t.TempDir(), "diagram.png")
	if err := os.WriteFile(path, testPNG(t, 32, 20, color.RGBA{40, 160, 90, 255}), 0o644); err != nil {
		t.Fatal(err)
	}
	pg.MustElement("#attach-input").MustSetFiles(path)
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 1`)
	p.Model.Push(scripted.Reply{Text: "A green diagram."})
	pg.MustElement("#welcome-text").MustInput("explain this")
	pg.MustElement(".welcome .btn-send").MustClick()
	waitJS(t, pg, `() => location.pathname.startsWith('/t/')`)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-user .attach-name')].map(e => e.innerText).join() === 'diagram.png'`)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('A green diagram.')`)
	reqs := p.Model.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Body), `"image_url"`) {
		t.Error("the first message's image did not reach the model")
	}
}

// Attachments have no serious or critical accessibility violation (axe,
// light and dark), on a sent message and in the composer, and are
// photographed at every width (artifacts/screen-attachments-*.png).
func TestA11yAttachments(t *testing.T) {
	a := newAuditor(t)
	p := startParley(t)
	id := p.newThread()
	pg := p.page("/t/" + id)
	dir := t.TempDir()
	shot, notes := filepath.Join(dir, "screenshot of the build failing.png"), filepath.Join(dir, "notes.md")
	if err := os.WriteFile(shot, testPNG(t, 120, 80, color.RGBA{70, 90, 200, 255}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("# Notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pg.MustElement("#attach-input").MustSetFiles(shot, notes)
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 2`)
	p.Model.Push(scripted.Reply{Text: "The build fails on the missing import; the notes say why."})
	sendMsg(t, pg, "why does it fail?")
	waitJS(t, pg, `() => document.querySelectorAll('#messages .msg-user .attach-chip').length === 2`)
	waitJS(t, pg, `() => [...document.querySelectorAll('#messages .msg-assistant .msg-body')].pop()?.innerText.includes('missing import')`)
	pg.MustElement("#attach-input").MustSetFiles(notes)
	waitJS(t, pg, `() => document.querySelectorAll('#attach-chips .attach-chip').length === 1`)
	blur(pg)
	a.screen(pg, "attachments", "")
}
