package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore/scripted"
)

// The token is made on first start, private (0600), the same at the next
// start, printed by `parley token`; --token replaces it.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadToken(dir)
	if err != nil || len(first) < 32 {
		t.Fatalf("first token %q: %v", first, err)
	}
	fi, err := os.Stat(TokenPath(dir))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if again, _ := LoadToken(dir); again != first {
		t.Fatalf("the token changed between starts: %q then %q", first, again)
	}
	var out bytes.Buffer
	if code := Main([]string{"token", "--data", dir}, &out, io.Discard); code != 0 || strings.TrimSpace(out.String()) != first {
		t.Fatalf("parley token: exit %d, printed %q, want %q", code, out.String(), first)
	}
	// A token file others can read is made private again.
	if err := os.Chmod(TokenPath(dir), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadToken(dir); err != nil || got != first {
		t.Fatalf("after chmod 644: %q %v", got, err)
	}
	if fi, _ := os.Stat(TokenPath(dir)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v after loading, want 0600", fi.Mode().Perm())
	}
	// --token / PARLEY_TOKEN sets it for good.
	if _, err := SetToken(dir, "chosen-token-123"); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadToken(dir); got != "chosen-token-123" {
		t.Fatalf("after SetToken: %q", got)
	}
	if _, err := SetToken(dir, "has a space"); err == nil || !strings.Contains(err.Error(), "printable ASCII") {
		t.Fatalf("a token with a space: %v", err)
	}
	// An empty or garbled file gets a new token.
	if err := os.WriteFile(TokenPath(dir), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadToken(dir); err != nil || got == "" || got == "chosen-token-123" {
		t.Fatalf("after an empty file: %q %v", got, err)
	}
}

// A token file that is a link (to another user's file, to /dev/stdin) is
// refused by name, not followed.
func TestTokenFileThatIsALink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(outside, []byte("someone-elses-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, TokenPath(dir)); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadToken(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a symlinked token file: %q %v", got, err)
	}
}

// `parley serve` prints the login address on the address it is bound to —
// 127.0.0.2, [::1] — and answers to that Host; without the token the API
// says 401 and a page asks for the token; the login address logs in.
func TestServePrintsItsLoginAddress(t *testing.T) {
	addrs := []string{"127.0.0.1:0", "127.0.0.2:0"}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		addrs = append(addrs, "[::1]:0")
	}
	for _, addr := range addrs {
		t.Run(addr, func(t *testing.T) {
			dir := t.TempDir()
			model := scripted.NewServer()
			t.Cleanup(model.Close)
			ctx, cancel := context.WithCancel(t.Context())
			urls := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				done <- Serve(ctx, Config{Addr: addr, DataDir: dir, Workspace: dir, Model: DemoModel, Getenv: func(string) string { return "" }},
					Options{Scripted: model, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, func(u string) { urls <- u })
			}()
			t.Cleanup(func() { cancel(); <-done })
			var login string
			select {
			case login = <-urls:
			case err := <-done:
				t.Fatalf("serve on %s: %v", addr, err)
			case <-time.After(30 * time.Second):
				t.Fatal("serve never said where it runs")
			}
			u, err := url.Parse(login)
			if err != nil {
				t.Fatal(err)
			}
			host, _, _ := net.SplitHostPort(addr)
			tok, _ := LoadToken(dir)
			if u.Hostname() != strings.Trim(host, "[]") || u.Path != "/" || u.Query().Get("token") != tok {
				t.Fatalf("printed %q, want http://%s:PORT/?token=<the folder's token>", login, host)
			}
			client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			base := "http://" + u.Host
			get := func(path string, hdr ...string) *http.Response {
				req, _ := http.NewRequest(http.MethodGet, base+path, nil)
				for i := 0; i+1 < len(hdr); i += 2 {
					req.Header.Set(hdr[i], hdr[i+1])
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			if r := get("/api/tools"); r.StatusCode != http.StatusUnauthorized {
				t.Errorf("API without a token: %d, want 401", r.StatusCode)
			}
			if r := get("/", "Accept", "text/html"); r.StatusCode != http.StatusUnauthorized {
				t.Errorf("page without a token: %d, want the login page (401)", r.StatusCode)
			}
			if r := get("/api/tools", "Authorization", "Bearer "+tok); r.StatusCode != http.StatusOK {
				t.Errorf("API with the token on its own Host: %d, want 200", r.StatusCode)
			}
			r := get(u.RequestURI())
			if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" || len(r.Cookies()) != 1 {
				t.Fatalf("the login address: %d to %q, cookies %v", r.StatusCode, r.Header.Get("Location"), r.Cookies())
			}
			c := r.Cookies()[0]
			if r := get("/", "Cookie", c.Name+"="+c.Value); r.StatusCode != http.StatusOK {
				t.Errorf("with the session: %d", r.StatusCode)
			}
		})
	}
}
