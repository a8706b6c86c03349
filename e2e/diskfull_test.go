package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
	"parley/app"
)

// fillsTheDisk is a long reply that fills the data folder's disk (the
// database's room, a real SQLite limit) at its 20th chunk.
func (p *parley) fillsTheDisk(t *testing.T) scripted.Reply {
	return scripted.Reply{Text: strings.Repeat("a reply that goes on and on ", 8_000), ChunkSize: 4, Delay: time.Millisecond,
		OnChunk: func(i int, _ string, _ time.Time) {
			if i == 20 {
				if err := p.In.Store.LimitPages(context.Background(), 0); err != nil {
					t.Error(err)
				}
			}
		}}
}

// room lifts the limit fillsTheDisk set.
func (p *parley) room(t *testing.T) {
	t.Helper()
	if err := p.In.Store.LimitPages(context.Background(), -1); err != nil {
		t.Fatal(err)
	}
}

const notSaved = "the disk is full: the reply could not be saved"

// A reply the disk cannot hold is a failure everywhere, never a success:
// generate answers 500 with the cause, the API stream ends with an error
// chunk naming it, the chat shows it with Retry, the messages API says
// failed; once there is room, Retry answers.
func TestFullDiskFailsTheReplyEverywhere(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	call := func(path string) *http.Response {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"messages": "go on", "memory": map[string]string{"thread": id, "resource": "default"}})
		resp, err := http.Post(p.URL+"/api/agents/parley/"+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	p.Model.Push(p.fillsTheDisk(t))
	resp := call("generate")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), notSaved) {
		t.Fatalf("generate with the disk full: %s %.300s", resp.Status, body)
	}
	p.room(t)

	p.Model.Push(p.fillsTheDisk(t))
	resp = call("stream")
	var last map[string]any
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		last = nil
		if err := json.Unmarshal([]byte(data), &last); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
	}
	resp.Body.Close()
	if msg, _ := json.Marshal(last["payload"]); last["type"] != "error" || !strings.Contains(string(msg), notSaved) {
		t.Fatalf("the stream ended with %v, want an error chunk naming the full disk", last)
	}
	p.room(t)

	pg := p.page("/t/" + id)
	p.Model.Push(p.fillsTheDisk(t))
	sendMsg(t, pg, "once more")
	// The two replies above failed the same way: this is the third.
	waitJS(t, pg, `(want) => { const ms = document.querySelectorAll('#messages .msg-assistant'), m = ms[2];
		return ms.length === 3 && m.dataset.status === 'error' && m.querySelector('.msg-error').innerText.includes(want) && m.querySelector('.msg-retry') !== null }`, notSaved)
	pg.MustScreenshot(artifact("reply-not-saved.png"))
	if got := evalString(pg, `() => [...document.querySelectorAll('#messages .msg-error strong')].pop().innerText`); got != "Parley could not save this reply." {
		t.Fatalf("the failed reply is introduced as %q", got)
	}

	// The API, while the disk is still full: all three failed, none
	// streaming or complete.
	resp, err := http.Get(p.URL + "/api/memory/threads/" + id + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Messages []struct {
			Role, Status string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, m := range list.Messages {
		if m.Role == "assistant" {
			statuses = append(statuses, m.Status)
		}
	}
	if strings.Join(statuses, " ") != "failed failed failed" {
		t.Fatalf("the messages API says the replies are %v, want 3 failed", statuses)
	}

	// Retry at once, before the failure the disk had no room for is
	// written: the chat says failed, so Retry takes it as failed. The new
	// reply takes the failed one's place, as its next version.
	p.room(t)
	p.Model.Push(scripted.Reply{Text: "Room again."})
	retries := pg.MustElements("#messages .msg-assistant .msg-retry")
	retries[len(retries)-1].MustClick()
	waitJS(t, pg, `() => { const ms = document.querySelectorAll('#messages .msg-assistant');
		return ms.length === 3 && ms[2].dataset.status === 'complete' && ms[2].innerText.includes('Room again.') && ms[2].querySelector('.version-count')?.innerText === '2/2' }`)
	pg.MustReload()
	pg.MustWaitLoad()
	if n := pg.MustEval(`() => document.querySelectorAll('#messages .msg-assistant[data-status=streaming]').length`).Int(); n != 0 {
		t.Fatalf("%d replies show streaming after a reload", n)
	}
}

// With less free space than the threshold on the data folder's disk, every
// screen warns, once: dismissed, it stays away.
func TestLowDiskBanner(t *testing.T) {
	model := scripted.NewServer()
	t.Cleanup(model.Close)
	p := launchWith(t, t.TempDir(), model, nil, newCallIDs(), func(o *app.Options) { o.LowDisk = 1 << 62 })
	for _, path := range []string{"/", "/settings"} {
		pg := p.page(path)
		text := evalString(pg, `() => document.querySelector('#low-disk[role=alert]')?.innerText ?? ''`)
		if !strings.Contains(text, "The disk is nearly full.") || !strings.Contains(text, p.dir) || !strings.Contains(text, " free on the disk") {
			t.Fatalf("%s warns %q, want the free space and the data folder named", path, text)
		}
		if path == "/" {
			pg.MustScreenshot(artifact("low-disk-banner.png"))
		}
		if path == "/settings" {
			pg.MustElement("#low-disk .banner-dismiss").MustClick()
			waitJS(t, pg, `() => document.querySelector('#low-disk') === null`)
			pg.MustReload()
			pg.MustWaitLoad()
			if pg.MustHas("#low-disk") {
				t.Fatal("the dismissed warning came back on a reload")
			}
		}
	}
	q := startParley(t) // the default threshold, 100 MB: this machine has more
	if pg := q.page("/"); pg.MustHas("#low-disk") {
		t.Fatal("a disk with room is warned of")
	}
}
