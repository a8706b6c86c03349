// Package llmtest replays real provider exchanges for tests: the go-vcr
// cassettes fantasy recorded against the live providers, served from a local
// HTTP server in small flushed pieces so clients really stream.
package llmtest

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml"
)

// Cassette is the part of a go-vcr v2 cassette the replay needs.
type Cassette struct {
	Interactions []struct {
		Request struct {
			Body   string `yaml:"body"`
			URL    string `yaml:"url"`
			Method string `yaml:"method"`
		} `yaml:"request"`
		Response struct {
			Body    string              `yaml:"body"`
			Headers map[string][]string `yaml:"headers"`
			Code    int                 `yaml:"code"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// fantasyDir finds fantasy's module in the module cache (never downloads).
var fantasyDir = sync.OnceValues(func() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "charm.land/fantasy")
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
})

// CassetteNames lists every cassette in fantasy's providertests/testdata,
// as LoadCassette names them.
func CassetteNames(t testing.TB) []string {
	t.Helper()
	dir, err := fantasyDir()
	if err != nil || dir == "" {
		t.Fatalf("locate charm.land/fantasy in the module cache: %v", err)
	}
	root := filepath.Join(dir, "providertests", "testdata")
	var names []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			names = append(names, filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator))))
		}
		return err
	})
	if err != nil || len(names) == 0 {
		t.Fatalf("list cassettes under %s: %d found, %v", root, len(names), err)
	}
	return names
}

// LoadCassette reads a cassette from fantasy's providertests/testdata.
func LoadCassette(t testing.TB, name string) Cassette {
	t.Helper()
	dir, err := fantasyDir()
	if err != nil || dir == "" {
		t.Fatalf("locate charm.land/fantasy in the module cache: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "providertests", "testdata", name))
	if err != nil {
		t.Fatalf("read cassette: %v", err)
	}
	var c Cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("parse cassette %s: %v", name, err)
	}
	if len(c.Interactions) == 0 {
		t.Fatalf("cassette %s has no interactions", name)
	}
	return c
}

// Testdata reads a file of fantasy's providertests/testdata that is no
// cassette: wish.png, the image its recorded image requests carry.
func Testdata(t testing.TB, name string) []byte {
	t.Helper()
	dir, err := fantasyDir()
	if err != nil || dir == "" {
		t.Fatalf("locate charm.land/fantasy in the module cache: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "providertests", "testdata", name))
	if err != nil {
		t.Fatalf("read fantasy's testdata: %v", err)
	}
	return data
}

// ReplayServer answers the cassette's interactions in order, writing each
// response body in small flushed pieces so the client really streams.
type ReplayServer struct {
	*httptest.Server
	mu       sync.Mutex
	next     int
	received []string // request bodies, in order
}

// NewReplayServer serves c; it is closed when the test ends.
func NewReplayServer(t testing.TB, c Cassette) *ReplayServer {
	s := &ReplayServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readAll(r)
		s.mu.Lock()
		i := s.next
		s.next++
		s.received = append(s.received, body)
		s.mu.Unlock()
		if i >= len(c.Interactions) {
			t.Errorf("unexpected request %d: %s %s", i, r.Method, r.URL)
			http.Error(w, "cassette exhausted", http.StatusTeapot)
			return
		}
		in := c.Interactions[i]
		recorded, _ := url.Parse(in.Request.URL)
		if r.Method != in.Request.Method || r.URL.Path != recorded.Path {
			t.Errorf("request %d: got %s %s, recorded %s %s", i, r.Method, r.URL.Path, in.Request.Method, recorded.Path)
		}
		for k, vs := range in.Response.Headers {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(in.Response.Code)
		writeSlowly(w, in.Response.Body, 48)
	}))
	t.Cleanup(s.Close)
	return s
}

// Body is the i-th request body received.
func (s *ReplayServer) Body(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.received) {
		return ""
	}
	return s.received[i]
}

func writeSlowly(w http.ResponseWriter, body string, piece int) {
	for len(body) > 0 {
		n := min(piece, len(body))
		if _, err := w.Write([]byte(body[:n])); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		body = body[n:]
	}
}

func readAll(r *http.Request) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
