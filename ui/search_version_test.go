package ui_test

import (
	"net/http"
	"strings"
	"testing"

	"parley/agentcore"
)

// The search box marks a hit in a version of its chat that is not shown
// (search finds every branch), and only such a hit; the hit's text and the
// chat's title stay text, however hostile.
func TestSearchBoxMarksOtherVersion(t *testing.T) {
	e := newAPIEnv(t)
	ctx := t.Context()
	th, err := e.rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: `Tom's "okapi" <b>chat</b>`})
	if err != nil {
		t.Fatal(err)
	}
	add := func(role agentcore.Role, text string) string {
		m, err := e.db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: role, Content: agentcore.TextContent(text)})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	question := add(agentcore.RoleUser, "Which animal is an okapi?")
	older := add(agentcore.RoleAssistant, `An okapi <img src=x onerror=alert(1)> is a giraffe's cousin.`)
	if err := e.db.RewindTo(ctx, th.ID, question); err != nil {
		t.Fatal(err)
	}
	newer := add(agentcore.RoleAssistant, "The okapi lives in the Congo.")

	code, body := e.searchBox("okapi")
	if code != http.StatusOK {
		t.Fatalf("okapi: %d %s", code, body)
	}
	hits := map[string]string{} // message id: its hit's HTML
	for _, h := range strings.Split(body, `class="search-hit"`)[1:] {
		for _, id := range []string{question, older, newer} {
			if strings.Contains(h, "?m="+id+`"`) {
				hits[id] = h
			}
		}
	}
	if len(hits) != 3 {
		t.Fatalf("%d message hits, want 3: %s", len(hits), body)
	}
	const mark = `class="hit-version"`
	if h := hits[older]; !strings.Contains(h, mark) || !strings.Contains(h, ">Other version<") {
		t.Errorf("the older reply, not shown, is not marked: %s", h)
	}
	for _, id := range []string{question, newer} {
		if strings.Contains(hits[id], mark) {
			t.Errorf("a hit on the shown branch is marked: %s", hits[id])
		}
	}
	for _, want := range []string{`&lt;img src=x onerror=alert(1)&gt;`, `Tom&#39;s &#34;<mark>okapi</mark>&#34; &lt;b&gt;chat&lt;/b&gt;`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in %s", want, body)
		}
	}
	for _, bad := range []string{"<img", "<b>", `Tom's`, `"okapi"`} {
		if strings.Contains(body, bad) {
			t.Errorf("%q reached the page unescaped: %s", bad, body)
		}
	}

	// Shown, the older reply is no longer another version; the newer is.
	if err := e.db.SwitchBranch(ctx, th.ID, older); err != nil {
		t.Fatal(err)
	}
	_, body = e.searchBox("congo")
	if !strings.Contains(body, "?m="+newer+`"`) || !strings.Contains(body, mark) {
		t.Errorf("the newer reply, now not shown, is not marked: %s", body)
	}
}
