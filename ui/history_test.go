package ui_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"parley/agentcore"
)

// seedThread makes a thread of n user messages whose texts are "m001"…;
// it returns the thread and the message ids by Seq (ids[1] is the first).
func seedThread(t *testing.T, e *apiEnv, n int) (string, []string) {
	t.Helper()
	th, err := e.rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default", Title: "Long"})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n+1)
	for i := 1; i <= n; i++ {
		m, err := e.db.AppendMessage(t.Context(), agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
			Content: agentcore.TextContent(fmt.Sprintf("m%03d", i))})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	return th.ID, ids
}

// fetch GETs path and returns the status and body.
func (e *apiEnv) fetch(path string) (int, string) {
	e.t.Helper()
	resp := e.send("GET", path, "")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var shownRE = regexp.MustCompile(`<p class="plain">m(\d{3})</p>`)

// shown lists the message numbers in a page, in order, as "first-last".
func shown(body string) string {
	all := shownRE.FindAllStringSubmatch(body, -1)
	if len(all) == 0 {
		return "none"
	}
	var nums []string
	for _, m := range all {
		nums = append(nums, strings.TrimLeft(m[1], "0"))
	}
	for i := 1; i < len(nums); i++ {
		var a, b int
		fmt.Sscan(nums[i-1], &a)
		fmt.Sscan(nums[i], &b)
		if b != a+1 {
			return "gap at " + nums[i-1] + ": " + strings.Join(nums, ",")
		}
	}
	return nums[0] + "-" + nums[len(nums)-1]
}

func TestThreadOpensOnItsLatestPage(t *testing.T) {
	e := newAPIEnv(t)
	id, _ := seedThread(t, e, 120)

	code, body := e.fetch("/t/" + id)
	if code != http.StatusOK || shown(body) != "71-120" {
		t.Fatalf("page: %d, shows %s, want 71-120", code, shown(body))
	}
	if !strings.Contains(body, `id="older"`) || !strings.Contains(body, "/t/"+id+"/older?before=71") {
		t.Fatal("no older loader with the cursor before=71")
	}
	if strings.Contains(body, `id="newer"`) {
		t.Error("the latest page has a newer loader")
	}

	// Scrolling up: the page before each cursor replaces the loader, with a
	// loader of its own while more remain.
	code, body = e.fetch("/t/" + id + "/older?before=71")
	if code != http.StatusOK || shown(body) != "21-70" {
		t.Fatalf("older before 71: %d, shows %s", code, shown(body))
	}
	for _, want := range []string{"data: selector #older", "data: mode replace", "/t/" + id + "/older?before=21"} {
		if !strings.Contains(body, want) {
			t.Errorf("older before 71: no %q in %s", want, body[:min(len(body), 300)])
		}
	}
	code, body = e.fetch("/t/" + id + "/older?before=21")
	if code != http.StatusOK || shown(body) != "1-20" || strings.Contains(body, `id="older"`) {
		t.Fatalf("older before 21: %d, shows %s, loader left: %v", code, shown(body), strings.Contains(body, `id="older"`))
	}
	if _, body = e.fetch("/t/" + id + "/older?before=1"); shown(body) != "none" {
		t.Errorf("older before 1 shows %s", shown(body))
	}

	// A short thread has no loader at all.
	short, _ := seedThread(t, e, 50)
	if _, body := e.fetch("/t/" + short); shown(body) != "1-50" || strings.Contains(body, `id="older"`) {
		t.Errorf("50 messages: shows %s, loader: %v", shown(body), strings.Contains(body, `id="older"`))
	}
	short, _ = seedThread(t, e, 51)
	if _, body := e.fetch("/t/" + short); shown(body) != "2-51" || !strings.Contains(body, "older?before=2") {
		t.Errorf("51 messages: shows %s", shown(body))
	}
}

func TestThreadOpensOnAMessage(t *testing.T) {
	e := newAPIEnv(t)
	id, ids := seedThread(t, e, 120)

	// A message on an older page: the page around it, highlighted, with
	// loaders both ways, and a stream that renders the same page.
	code, body := e.fetch("/t/" + id + "?m=" + ids[40])
	if code != http.StatusOK || shown(body) != "15-64" {
		t.Fatalf("at 40: %d, shows %s, want 15-64", code, shown(body))
	}
	hit := regexp.MustCompile(`<article id="msg-([0-9a-f]+)" class="[^"]*msg-hit`).FindAllStringSubmatch(body, -1)
	if len(hit) != 1 || hit[0][1] != ids[40] {
		t.Errorf("highlighted: %v, want only message 40", hit)
	}
	for _, want := range []string{"/t/" + id + "/older?before=15", "/t/" + id + "/newer?after=64\\u0026until=121",
		"/t/" + id + "/stream?m=" + ids[40]} {
		if !strings.Contains(body, want) {
			t.Errorf("at 40: no %q", want)
		}
	}
	// Scrolling down walks to the end a page at a time.
	code, body = e.fetch("/t/" + id + "/newer?after=64&until=121")
	if code != http.StatusOK || shown(body) != "65-114" {
		t.Fatalf("newer after 64: %d, shows %s", code, shown(body))
	}
	for _, want := range []string{"data: selector #newer", "data: mode replace", "/t/" + id + "/newer?after=114\\u0026until=121"} {
		if !strings.Contains(body, want) {
			t.Errorf("newer after 64: no %q", want)
		}
	}
	if _, body = e.fetch("/t/" + id + "/newer?after=114&until=121"); shown(body) != "115-120" || strings.Contains(body, `id="newer"`) {
		t.Errorf("newer after 114: shows %s", shown(body))
	}
	// Messages the stream adds (Seq ≥ until) never come twice.
	if _, body = e.fetch("/t/" + id + "/newer?after=64&until=70"); shown(body) != "65-69" {
		t.Errorf("newer after 64 until 70: shows %s", shown(body))
	}

	// Near the start: what there is before it, and the rest of the page after.
	if _, body = e.fetch("/t/" + id + "?m=" + ids[3]); shown(body) != "1-50" || strings.Contains(body, `id="older"`) ||
		!strings.Contains(body, "newer?after=50\\u0026until=121") {
		t.Errorf("at 3: shows %s", shown(body))
	}
	// On the latest page: the latest page, highlighted there.
	if _, body = e.fetch("/t/" + id + "?m=" + ids[100]); shown(body) != "71-120" || strings.Contains(body, `id="newer"`) ||
		!strings.Contains(body, `msg-hit`) {
		t.Errorf("at 100: shows %s", shown(body))
	}
	// A message of another thread, or none: the latest page, nothing highlighted.
	_, other := seedThread(t, e, 3)
	for _, m := range []string{other[1], "nope", "%22%3E%3Cscript%3E"} {
		if _, body = e.fetch("/t/" + id + "?m=" + m); shown(body) != "71-120" || strings.Contains(body, "msg-hit") {
			t.Errorf("at %s: shows %s", m, shown(body))
		}
	}
}

func TestPageCursorsAreChecked(t *testing.T) {
	e := newAPIEnv(t)
	id, _ := seedThread(t, e, 3)
	for _, path := range []string{
		"/t/" + id + "/older", "/t/" + id + "/older?before=", "/t/" + id + "/older?before=0",
		"/t/" + id + "/older?before=-4", "/t/" + id + "/older?before=x", "/t/" + id + "/older?before=1e3",
		"/t/" + id + "/newer?after=1", "/t/" + id + "/newer?until=9", "/t/" + id + "/newer?after=a&until=9",
	} {
		code, body := e.fetch(path)
		if code != http.StatusBadRequest || !strings.Contains(body, "sequence number") {
			t.Errorf("%s: %d %q, want 400 naming the cursor", path, code, body)
		}
	}
	if code, _ := e.fetch("/t/nope/older?before=5"); code != http.StatusNotFound {
		t.Errorf("older of an unknown thread: %d", code)
	}
	if code, _ := e.fetch("/t/nope/newer?after=1&until=5"); code != http.StatusNotFound {
		t.Errorf("newer of an unknown thread: %d", code)
	}
}
