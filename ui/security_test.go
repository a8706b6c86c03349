package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/storage"
)

func testServer(t *testing.T, auth *Auth) *Server {
	t.Helper()
	s, _, _ := testServerOn(t, auth)
	return s
}

// testServerOn is testServer with the runtime's store and bus, for tests
// that seed messages or play events to the server's streams.
func testServerOn(t *testing.T, auth *Auth) (*Server, agentcore.Store, *agentcore.Bus) {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := agentcore.NewBus()
	rt := agentcore.NewRuntimeOn(db, bus, nil, &agentcore.Agent{ID: "parley", Model: "x/y"})
	t.Cleanup(func() { rt.Close(); db.Close() })
	s, err := New(Config{Runtime: rt, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	s.AllowHosts("127.0.0.1:7777", "localhost:7777")
	return s, db, bus
}

func do(h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader("text=hi"))
	r.Host = "127.0.0.1:7777"
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGuardHostAndOrigin(t *testing.T) {
	h := testServer(t, nil).Handler()
	cases := []struct {
		name   string
		method string
		hdr    map[string]string
		want   int
	}{
		{"page", "GET", nil, 200},
		{"rebound host", "GET", map[string]string{"Host": "evil.example:7777"}, http.StatusMisdirectedRequest},
		{"same-origin post", "POST", map[string]string{"Origin": "http://127.0.0.1:7777"}, http.StatusSeeOther},
		{"cli post without origin", "POST", nil, http.StatusSeeOther},
		{"cross-origin post", "POST", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"null origin post", "POST", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"cross-site fetch", "POST", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	}
	for _, c := range cases {
		target := "/"
		if c.method == "POST" {
			target = "/threads"
		}
		if got := do(h, c.method, target, c.hdr).Code; got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	w := do(h, "GET", "/", nil)
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline'; img") && strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
		t.Errorf("CSP allows inline script: %q", csp)
	}
}

func TestGuardToken(t *testing.T) {
	h := testServer(t, NewAuth("s3cret")).Handler()
	if got := do(h, "GET", "/", nil).Code; got != http.StatusUnauthorized {
		t.Fatalf("no token: %d", got)
	}
	if got := do(h, "GET", "/", map[string]string{"Authorization": "Bearer wrong"}).Code; got != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", got)
	}
	if got := do(h, "GET", "/", map[string]string{"Authorization": "Bearer s3cret"}).Code; got != 200 {
		t.Fatalf("bearer token: %d", got)
	}
	w := do(h, "GET", "/auth?token=s3cret", nil)
	cookie := w.Result().Cookies()
	if w.Code >= 400 || len(cookie) != 1 || !cookie[0].HttpOnly || cookie[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("token exchange: %d %v", w.Code, cookie)
	}
	if got := do(h, "GET", "/", map[string]string{"Cookie": cookie[0].Name + "=" + cookie[0].Value}).Code; got != 200 {
		t.Fatalf("session cookie: %d", got)
	}
	if got := do(h, "GET", "/", map[string]string{"Cookie": cookie[0].Name + "=forged"}).Code; got != http.StatusUnauthorized {
		t.Fatalf("forged cookie: %d", got)
	}
}

// A browser that opens any page with ?token= gets a session cookie
// (HttpOnly, SameSite=Strict, named for the port) and is sent on to the same
// page without the token; the cookie still works after a restart with the
// same token and stops working when the token changes.
func TestTokenLoginOnAnyPage(t *testing.T) {
	h := testServer(t, NewAuth("s3cret-token-0123")).Handler()
	w := do(h, "GET", "/settings?tab=keys&token=s3cret-token-0123", map[string]string{"Accept": "text/html", "Sec-Fetch-Site": "none"})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings?tab=keys" {
		t.Fatalf("login: %d to %q, want 303 to /settings?tab=keys", w.Code, w.Header().Get("Location"))
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 || cs[0].Name != "parley_session_7777" || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("cookie: %+v", cs)
	}
	if strings.Contains(cs[0].Value, "s3cret") {
		t.Fatalf("the cookie carries the token itself: %q", cs[0].Value)
	}
	cookie := map[string]string{"Cookie": cs[0].Name + "=" + cs[0].Value}
	if got := do(h, "GET", "/", cookie).Code; got != 200 {
		t.Fatalf("with the cookie: %d", got)
	}
	// Another port is another Parley: the cookie is not its.
	if got := do(testServer(t, NewAuth("s3cret-token-0123")).Handler(), "GET", "/", map[string]string{"Cookie": "parley_session_7778=" + cs[0].Value}).Code; got != http.StatusUnauthorized {
		t.Fatalf("a cookie of another port: %d", got)
	}
	// A restart keeps the token, so the session goes on.
	if got := do(testServer(t, NewAuth("s3cret-token-0123")).Handler(), "GET", "/", cookie).Code; got != 200 {
		t.Fatalf("after a restart: %d", got)
	}
	if got := do(testServer(t, NewAuth("another-token-456")).Handler(), "GET", "/", cookie).Code; got != http.StatusUnauthorized {
		t.Fatalf("after the token changed: %d", got)
	}
	// Opened from another site, the hop to the clean address is a page
	// (a redirect would arrive without the Strict cookie).
	w = do(h, "GET", "/?token=s3cret-token-0123", map[string]string{"Accept": "text/html", "Sec-Fetch-Site": "cross-site"})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `content="0;url=/"`) || len(w.Result().Cookies()) != 1 {
		t.Fatalf("cross-site login: %d %s", w.Code, w.Body.String())
	}
	// A wrong token: the login page, no cookie.
	w = do(h, "GET", "/?token=wrong", map[string]string{"Accept": "text/html"})
	if w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) != 0 || !strings.Contains(w.Body.String(), "not this Parley") {
		t.Fatalf("wrong token: %d %v", w.Code, w.Result().Cookies())
	}
}

// Without a credential a browser gets the login page, an API client one
// line naming what is missing; the page's style is served to both.
func TestNoCredential(t *testing.T) {
	h := testServer(t, NewAuth("s3cret-token-0123")).Handler()
	w := do(h, "GET", "/t/abc", map[string]string{"Accept": "text/html,application/xhtml+xml"})
	body := w.Body.String()
	if w.Code != http.StatusUnauthorized || !strings.Contains(body, `<input id="token" name="token"`) || !strings.Contains(body, "parley token") {
		t.Fatalf("page: %d %s", w.Code, body)
	}
	if !strings.Contains(body, `action="/t/abc"`) {
		t.Errorf("the login form does not come back to the page asked for: %s", body)
	}
	w = do(h, "GET", "/api/tools", map[string]string{"Accept": "text/html"})
	if w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), "<form") ||
		!strings.HasPrefix(w.Body.String(), "Parley: authentication required: No token or session came with this request.") ||
		strings.Count(strings.TrimSpace(w.Body.String()), "\n") > 0 || w.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("api: %d %q", w.Code, w.Body.String())
	}
	for _, method := range []string{"POST", "GET"} {
		if got := do(h, method, "/api/tools/execute_command/execute", nil).Code; got != http.StatusUnauthorized {
			t.Errorf("%s the tools route without a token: %d", method, got)
		}
	}
	if got := do(h, "GET", "/static/app.css", nil).Code; got != 200 {
		t.Errorf("the login page's style: %d", got)
	}
	// A path that names another host sends the login form home, not there.
	for _, p := range []string{"//evil.example/x", `/\evil.example/x`} {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.Path, r.Host = p, "127.0.0.1:7777"
		r.Header.Set("Accept", "text/html")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if !strings.Contains(w.Body.String(), `action="/"`) || strings.Contains(w.Body.String(), "evil.example") {
			t.Errorf("login form for path %q: %s", p, w.Body.String())
		}
	}
	// A hostile path is text in the login page, never markup.
	w = do(h, "GET", `/t/%22%3E%3Cscript%3Ealert(1)%3C/script%3E`, map[string]string{"Accept": "text/html"})
	if strings.Contains(w.Body.String(), "<script>") {
		t.Fatalf("the path reached the page as markup: %s", w.Body.String())
	}
}

func TestLaunchSecretWorksOnce(t *testing.T) {
	auth := NewAuth("")
	h := testServer(t, auth).Handler()
	path := auth.LaunchPath()
	if got := do(h, "GET", "/", nil).Code; got != http.StatusUnauthorized {
		t.Fatalf("before login: %d", got)
	}
	w := do(h, "GET", path, nil)
	if w.Code >= 400 || len(w.Result().Cookies()) != 1 {
		t.Fatalf("first exchange: %d", w.Code)
	}
	if got := do(h, "GET", path, nil).Code; got != http.StatusUnauthorized {
		t.Fatalf("second exchange of the same secret: %d", got)
	}
	c := w.Result().Cookies()[0]
	if got := do(h, "GET", "/", map[string]string{"Cookie": c.Name + "=" + c.Value}).Code; got != 200 {
		t.Fatalf("with cookie: %d", got)
	}
}

// Each failure answers with the status a client can act on.
func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("thread x: %w", agentcore.ErrNotFound), http.StatusNotFound},
		{agentcore.ErrBusy, http.StatusConflict},
		{fmt.Errorf("send: %w", agentcore.ErrClosed), http.StatusServiceUnavailable},
		{fmt.Errorf("delete thread x: its reply was stopped but has not ended yet: %w", context.DeadlineExceeded), http.StatusServiceUnavailable},
		{fmt.Errorf("%w: the title is empty", errBadRequest), http.StatusBadRequest},
		{errors.New("disk full"), http.StatusInternalServerError},
	} {
		if got := statusOf(c.err); got != c.want {
			t.Errorf("statusOf(%q) = %d, want %d", c.err, got, c.want)
		}
	}
}
