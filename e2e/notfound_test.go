package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A link to a chat that does not exist (deleted, mistyped) answers 404 with
// a page in the app's layout that says so and offers a new chat, instead of
// silently landing on the new-chat screen.
func TestUnknownChatIsNotFound(t *testing.T) {
	p := startParley(t)
	known := p.newThread()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(p.URL + "/t/no-such-chat")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "This chat does not exist") {
		t.Fatalf("GET /t/no-such-chat: %s, Location %q, body has the not-found page: %v", resp.Status, resp.Header.Get("Location"), strings.Contains(string(body), "This chat does not exist"))
	}

	// Markup in the link stays out of the page.
	pg := p.page(`/t/%3Cimg%20src%3Dx%20onerror%3D%22document.title%3D'pwned'%22%3E`)
	waitJS(t, pg, `() => document.querySelector('#not-found h1')?.innerText === 'This chat does not exist'`)
	if title := evalString(pg, `() => document.title`); title != "Chat not found · Parley" {
		t.Fatalf("title %q", title)
	}
	if n := pg.MustEval(`() => document.querySelectorAll('img[src=x]').length`).Int(); n != 0 {
		t.Fatalf("%d injected images", n)
	}
	// The app is around it: the sidebar lists the chats.
	waitJS(t, pg, `() => document.querySelector('#sidebar a[href="/t/`+known+`"]') !== null`)
	pg.MustScreenshot(artifact("chat-not-found.png"))

	pg.MustElement("#not-found-new").MustClick()
	waitJS(t, pg, `() => location.pathname === '/' && document.querySelector('.welcome textarea[name=text]') !== null`)
}
