package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	scriptedsrv "parley/agentcore/scripted"
)

// The connection test against the scripted OpenAI-compatible server: a
// real request to its model list.
func TestPingOpenAICompatible(t *testing.T) {
	srv := scriptedsrv.NewServer()
	defer srv.Close()
	cfg := Config{BaseURLs: map[string]string{"openai-compatible": srv.URL()}, Getenv: env(nil)}
	got, err := Ping(context.Background(), "openai-compatible", cfg)
	if err != nil || got != "connected: 1 models offered" {
		t.Fatalf("Ping = %q, %v", got, err)
	}
}

// Each provider is asked the way its API wants: path and auth header.
func TestPingProviders(t *testing.T) {
	var seen *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		switch r.URL.Path {
		case "/v1/models", "/v1beta/models", "/models", "/key", "/v1/key":
		default:
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") == "Bearer bad" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error": {"message": "Incorrect API key provided"}}`))
			return
		}
		w.Write([]byte(`{"data": [{"id": "a"}, {"id": "b"}], "models": []}`))
	}))
	defer srv.Close()
	for _, c := range []struct {
		provider, key, base, path, header, value string
	}{
		{"openai", "sk-1", srv.URL + "/v1", "/v1/models", "Authorization", "Bearer sk-1"},
		{"anthropic", "ak-1", srv.URL, "/v1/models", "X-Api-Key", "ak-1"},
		{"google", "gk-1", srv.URL, "/v1beta/models", "X-Goog-Api-Key", "gk-1"},
		{"openrouter", "or-1", srv.URL + "/v1", "/v1/key", "Authorization", "Bearer or-1"},
		{"ollama", "", srv.URL, "/v1/models", "", ""},
	} {
		cfg := Config{APIKeys: map[string]string{c.provider: c.key}, BaseURLs: map[string]string{c.provider: c.base}, Getenv: env(nil)}
		got, err := Ping(context.Background(), c.provider, cfg)
		if err != nil {
			t.Errorf("%s: %v", c.provider, err)
			continue
		}
		if seen.URL.Path != c.path || (c.header != "" && seen.Header.Get(c.header) != c.value) {
			t.Errorf("%s asked %s with %s=%q", c.provider, seen.URL.Path, c.header, seen.Header.Get(c.header))
		}
		if c.provider != "openrouter" && got != "connected: 2 models offered" {
			t.Errorf("%s: %q", c.provider, got)
		}
	}

	_, err := Ping(context.Background(), "openai", Config{APIKeys: map[string]string{"openai": "bad"}, BaseURLs: map[string]string{"openai": srv.URL + "/v1"}, Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "Incorrect API key provided") {
		t.Fatalf("a refused key: %v", err)
	}
	if _, err := Ping(context.Background(), "anthropic", Config{Getenv: env(nil)}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("no key: %v", err)
	}
	if _, err := Ping(context.Background(), "nope", Config{}); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Fatalf("unknown provider: %v", err)
	}
	_, err = Ping(context.Background(), "openai-compatible", Config{BaseURLs: map[string]string{"openai-compatible": srv.URL + "/nothing-here"}, Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("wrong address: %v", err)
	}
}
