package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/app/chat"
)

// A chat's own instructions: saved, removed; too long, not text or for a
// chat that is not there, refused by name with nothing saved; shown
// escaped.
func TestChatInstructionsRoute(t *testing.T) {
	s, db, _ := testServerOn(t, nil)
	h := s.Handler()
	th, _ := db.CreateThread(t.Context(), agentcore.Thread{ResourceID: defaultResource})
	post := func(id, text string) *http.Response {
		r := httptest.NewRequest("POST", "/t/"+id+"/instructions", strings.NewReader(url.Values{"text": {text}}.Encode()))
		r.Host = "127.0.0.1:7777"
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Datastar-Request", "true")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}
	saved := func() string {
		got, _ := db.GetThread(t.Context(), th.ID)
		return chat.Of(got).Instructions
	}
	body := func(r *http.Response) string {
		b := new(strings.Builder)
		_, _ = io.Copy(b, r.Body)
		return b.String()
	}
	if r := post(th.ID, "  Answer in <b>French</b>.  "); !strings.Contains(body(r), "Saved") || saved() != "Answer in <b>French</b>." {
		t.Fatalf("save: %q", saved())
	}
	for text, want := range map[string]string{
		strings.Repeat("x", chat.MaxChatInstructions+1): "limited to 8 KiB",
		"nul \x00 byte":  "not plain text",
		"bad \xff utf-8": "not plain text",
	} {
		if r := post(th.ID, text); !strings.Contains(body(r), want) || saved() != "Answer in <b>French</b>." {
			t.Fatalf("%.20q: want %q, saved %q", text, want, saved())
		}
	}
	if r := post("no-such-chat", "x"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("a chat that is not there: %d", r.StatusCode)
	}
	// Shown escaped in the header.
	page := do(h, "GET", "/t/"+th.ID, nil).Body.String()
	if !strings.Contains(page, "Answer in &lt;b&gt;French&lt;/b&gt;.") || strings.Contains(page, "<b>French</b>") {
		t.Fatal("the chat's instructions are not escaped in the page")
	}
	if r := post(th.ID, ""); !strings.Contains(body(r), "Removed") || saved() != "" {
		t.Fatalf("remove: %q", saved())
	}
}
