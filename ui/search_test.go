package ui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parley/agentcore"
)

func TestAPISearch(t *testing.T) {
	e := newAPIEnv(t)
	th, err := e.rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default", Title: "Walrus facts"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.db.AppendMessage(t.Context(), agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent(`a walrus <img src=x onerror="alert(1)"> & co`)})
	if err != nil {
		t.Fatal(err)
	}

	v := e.call("GET", "/api/search?q=walrus", "", http.StatusOK)
	if get(v, "query") != "walrus" || len(get(v, "hits").([]any)) != 2 {
		t.Fatalf("walrus: %v", v)
	}
	if get(v, "hits", 0, "field") != "title" || get(v, "hits", 0, "threadId") != th.ID || get(v, "hits", 0, "messageId") != nil {
		t.Errorf("first hit is not the title: %v", get(v, "hits", 0))
	}
	hit := get(v, "hits", 1)
	if get(hit, "messageId") != m.ID || get(hit, "threadTitle") != "Walrus facts" || get(hit, "role") != "user" ||
		get(hit, "field") != "text" || get(hit, "createdAt") == nil {
		t.Errorf("message hit: %v", hit)
	}
	// The snippet is safe HTML: the message's markup is escaped text.
	want := `a <mark>walrus</mark> &lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; co`
	if got := get(hit, "snippet"); got != want {
		t.Errorf("snippet %q, want %q", got, want)
	}
	if got := get(hit, "parts", 1, "text"); got != "walrus" || get(hit, "parts", 1, "match") != true {
		t.Errorf("parts: %v", get(hit, "parts"))
	}

	if v := e.call("GET", "/api/search?q=walrus&limit=1", "", http.StatusOK); len(get(v, "hits").([]any)) != 1 {
		t.Errorf("limit 1: %v", v)
	}
	// Whatever q holds, the answer is hits (maybe none), never a failure.
	for _, q := range []string{"", " ", `"`, `'`, "*", "(", "walrus OR", "NOT walrus", "title:walrus", `"walrus`, "NEAR(a b)",
		"\x00", "wal*rus", "-walrus", "^walrus", "walrus\"*"} {
		v := e.call("GET", "/api/search?q="+url.QueryEscape(q), "", http.StatusOK)
		if _, ok := get(v, "hits").([]any); !ok {
			t.Errorf("q %q: %v", q, v)
		}
	}
	for _, path := range []string{"/api/search?q=a&limit=0", "/api/search?q=a&limit=101", "/api/search?q=a&limit=x",
		"/api/search?q=" + strings.Repeat("a", 1001)} {
		v := e.call("GET", path, "", http.StatusBadRequest)
		if s, _ := get(v, "error").(string); !strings.Contains(s, "limit") && !strings.Contains(s, "too long") {
			t.Errorf("%.60s: error %q", path, s)
		}
	}
}

// searchBox asks the search box's endpoint what it lists for q, as the
// browser does: the signals in the datastar query parameter.
func (e *apiEnv) searchBox(q string) (int, string) {
	e.t.Helper()
	sig, _ := json.Marshal(map[string]string{"q": q, "draft": ""})
	return e.fetch("/search?datastar=" + url.QueryEscape(string(sig)))
}

func TestSearchBox(t *testing.T) {
	e := newAPIEnv(t)
	th, err := e.rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "default", Title: "<b>Zoo</b> notes"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.db.AppendMessage(t.Context(), agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("the okapi <script>alert(1)</script> lives here")})
	if err != nil {
		t.Fatal(err)
	}

	code, body := e.searchBox("oka")
	if code != http.StatusOK {
		t.Fatalf("oka: %d %s", code, body)
	}
	for _, want := range []string{`id="search-results"`, `href="/t/` + th.ID + `?m=` + m.ID + `"`, `<mark>okapi</mark>`,
		`&lt;script&gt;`, `&lt;b&gt;Zoo&lt;/b&gt; notes`, `aria-selected="true"`, `>You<`} {
		if !strings.Contains(body, want) {
			t.Errorf("oka: no %q in %s", want, body)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "<b>") {
		t.Errorf("markup from the store reached the page: %s", body)
	}
	if _, body := e.searchBox("zoo"); !strings.Contains(body, `href="/t/`+th.ID+`"`) || !strings.Contains(body, ">Title<") {
		t.Errorf("zoo: no title hit in %s", body)
	}
	if _, body := e.searchBox(""); !strings.Contains(body, "Search every chat") {
		t.Errorf("empty: %s", body)
	}
	if _, body := e.searchBox("zebra"); !strings.Contains(body, "No matches for “zebra”") {
		t.Errorf("zebra: %s", body)
	}
	for _, q := range []string{`"`, "(", "*", "okapi OR", "NEAR(", `"okapi`} {
		if code, body := e.searchBox(q); code != http.StatusOK || strings.Contains(body, "Search failed") {
			t.Errorf("%q: %d %s", q, code, body)
		}
	}
	if _, body := e.searchBox(strings.Repeat("x", 1001)); !strings.Contains(body, "too long to search") {
		t.Errorf("long query: %s", body)
	}
	if code, _ := e.fetch("/search?datastar=%7Bnot-json"); code != http.StatusBadRequest {
		t.Errorf("bad signals: %d", code)
	}
}
