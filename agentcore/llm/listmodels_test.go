package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	scriptedsrv "parley/agentcore/scripted"
)

// The picker's list comes from the provider's own model list, in each
// provider's shape; ids that could not be a model (blank, with spaces or
// control characters, far too long) are left out, the rest kept verbatim.
func TestListModels(t *testing.T) {
	srv := scriptedsrv.NewServer()
	defer srv.Close()
	got, err := ListModels(context.Background(), "openai-compatible", Config{BaseURLs: map[string]string{"openai-compatible": srv.URL()}, Getenv: env(nil)})
	if err != nil || !slices.Equal(got, []string{"openai-compatible/scripted"}) {
		t.Fatalf("scripted server: %q, %v", got, err)
	}

	hostile := `"><img/src=x/onerror=alert(1)>');//`
	var paths []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		switch r.URL.Path {
		case "/v1beta/models":
			w.Write([]byte(`{"models": [{"name": "models/gemini-2.5-flash", "supportedGenerationMethods": ["generateContent"]},
				{"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]}]}`))
		default:
			w.Write([]byte(`{"data": [{"id": "b-model"}, {"id": "a-model"}, {"id": "a-model"}, {"id": ""}, {"id": "has space"},
				{"id": "bell\u0007"}, {"id": "` + strings.Repeat("x", 300) + `"}, {"id": ` + jsonString(hostile) + `}]}`))
		}
	}))
	defer api.Close()
	for provider, base := range map[string]string{"openai": api.URL + "/v1", "anthropic": api.URL, "openrouter": api.URL + "/api/v1", "ollama": api.URL} {
		cfg := Config{APIKeys: map[string]string{provider: "k"}, BaseURLs: map[string]string{provider: base}, Getenv: env(nil)}
		got, err := ListModels(context.Background(), provider, cfg)
		want := []string{provider + "/" + hostile, provider + "/a-model", provider + "/b-model"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", provider, got, err, want)
		}
	}
	cfg := Config{APIKeys: map[string]string{"google": "k"}, BaseURLs: map[string]string{"google": api.URL}, Getenv: env(nil)}
	if got, err := ListModels(context.Background(), "google", cfg); err != nil || !slices.Equal(got, []string{"google/gemini-2.5-flash"}) {
		t.Errorf("google: %q, %v", got, err)
	}
	if !slices.Contains(paths, "/api/v1/models") || !slices.Contains(paths, "/v1/models") {
		t.Errorf("asked %q", paths)
	}
	if _, err := ListModels(context.Background(), "openai", Config{Getenv: env(nil)}); err == nil || !strings.Contains(err.Error(), "no API key") {
		t.Errorf("no key: %v", err)
	}
}
