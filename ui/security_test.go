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
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	rt := agentcore.NewRuntime(db, nil, &agentcore.Agent{ID: "parley", Model: "x/y"})
	t.Cleanup(func() { rt.Close(); db.Close() })
	s, err := New(Config{Runtime: rt, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	s.AllowHosts("127.0.0.1:7777", "localhost:7777")
	return s
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
