package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parley/agentcore"
)

// The tree's routes take ids from the address and text from a form: a
// message of another chat, an id that is not one, markup in the text and a
// model that is not one are refused by name, escaped, and change nothing.
func TestBranchRoutesHostile(t *testing.T) {
	s, db, _ := testServerOn(t, nil)
	s.cfg.CheckModel = func(spec string) error {
		if spec != "x/y" {
			return errors.New("unknown provider")
		}
		return nil
	}
	h := s.Handler()
	ctx := t.Context()
	th, _ := db.CreateThread(ctx, agentcore.Thread{ResourceID: defaultResource})
	other, _ := db.CreateThread(ctx, agentcore.Thread{ResourceID: defaultResource})
	const hostile = `</textarea><script>alert(1)</script>"'&`
	user, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, ResourceID: defaultResource, Role: agentcore.RoleUser,
		Status: agentcore.StatusComplete, Content: agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: hostile}}}})
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, ResourceID: defaultResource, Role: agentcore.RoleAssistant,
		Status: agentcore.StatusComplete, Content: agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: "ok"}}}})
	foreign, _ := db.AppendMessage(ctx, agentcore.Message{ThreadID: other.ID, ResourceID: defaultResource, Role: agentcore.RoleUser,
		Status: agentcore.StatusComplete, Content: agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: "elsewhere"}}}})
	at := func(msg, action string) string {
		return "/t/" + url.PathEscape(th.ID) + "/m/" + url.PathEscape(msg) + "/" + action
	}
	sse := map[string]string{"Datastar-Request": "true"}

	// The editor holds the text, escaped.
	w := do(h, "GET", at(user.ID, "editor"), sse)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "&lt;/textarea&gt;&lt;script&gt;") || strings.Contains(w.Body.String(), "<script>alert") {
		t.Fatalf("editor: %d %s", w.Code, w.Body)
	}
	if w := do(h, "GET", at(reply.ID, "editor"), sse); !strings.Contains(w.Body.String(), "Not edited") {
		t.Fatalf("editor of a reply: %d %s", w.Code, w.Body)
	}

	for _, id := range []string{foreign.ID, "'; DROP TABLE messages; --", "<img src=x onerror=alert(1)>", strings.Repeat("z", 3000)} {
		for _, action := range []string{"editor", "view", "models"} {
			// A plain-text error: the id in it is never markup.
			if w := do(h, "GET", at(id, action), sse); w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") || w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("GET %s of %.30q: %d %v %s", action, id, w.Code, w.Header(), w.Body)
			}
		}
		for _, action := range []string{"switch", "regenerate", "edit"} {
			w := do(h, "POST", at(id, action), sse)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Not ") || strings.Contains(w.Body.String(), "<img") {
				t.Fatalf("POST %s of %.30q: %d %s", action, id, w.Code, w.Body)
			}
		}
		if w := do(h, "POST", at(id, "fork"), nil); w.Code != http.StatusNotFound {
			t.Fatalf("fork at %.30q: %d %s", id, w.Code, w.Body)
		}
	}
	if w := do(h, "POST", at(reply.ID, "regenerate?model="+url.QueryEscape("<b>x</b>/y")), sse); !strings.Contains(w.Body.String(), "Not regenerated: model “&lt;b&gt;x&lt;/b&gt;/y” cannot be used: unknown provider") {
		t.Fatalf("regenerate with a bad model: %s", w.Body)
	}
	ms, _ := db.ListTree(ctx, th.ID)
	if len(ms) != 2 || ms[0].ID != user.ID || ms[1].ID != reply.ID || !ms[0].Active || !ms[1].Active {
		t.Fatalf("the refusals changed the chat: %+v", ms)
	}

	// Fork works from a plain form and lands on the new chat.
	w = do(h, "POST", at(user.ID, "fork"), nil)
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/t/") || strings.HasSuffix(w.Header().Get("Location"), th.ID) {
		t.Fatalf("fork: %d %v", w.Code, w.Header())
	}
}

// A fork says where it came from; what a chat's metadata says (an imported
// file may say anything) links only to a chat that is here.
func TestForkNoteHostileMetadata(t *testing.T) {
	s, db, _ := testServerOn(t, nil)
	h := s.Handler()
	ctx := t.Context()
	src, _ := db.CreateThread(ctx, agentcore.Thread{ResourceID: defaultResource, Title: `<img src=x onerror=alert(1)> source`})
	for _, tc := range []struct {
		from map[string]any
		want string
	}{
		{map[string]any{"threadId": src.ID, "messageId": "m1"}, `Forked from <a href="/t/` + src.ID + `?m=m1">&lt;img src=x onerror=alert(1)&gt; source</a>`},
		{map[string]any{"threadId": `"><script>alert(1)</script>`, "messageId": "x"}, "Forked from a chat that is not here any more"},
		{map[string]any{"threadId": "0123456789abcdef", "messageId": "javascript:alert(1)"}, "Forked from a chat that is not here any more"},
		{map[string]any{"threadId": 5}, "Forked from a chat that is not here any more"},
	} {
		th, err := db.CreateThread(ctx, agentcore.Thread{ResourceID: defaultResource, Metadata: map[string]any{agentcore.MetaForkedFrom: tc.from}})
		if err != nil {
			t.Fatal(err)
		}
		w := do(h, "GET", "/t/"+th.ID, nil)
		body := w.Body.String()
		if w.Code != http.StatusOK || !strings.Contains(body, tc.want) || strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Fatalf("fork note of %v: %d, want %q in\n%s", tc.from, w.Code, tc.want, body)
		}
	}
}
