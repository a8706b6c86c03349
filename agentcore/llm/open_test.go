package llm

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestOpenErrors(t *testing.T) {
	cases := []struct {
		spec string
		env  map[string]string
		want []string // fragments of the error
	}{
		{"gpt-4o", nil, []string{`"gpt-4o"`, `"provider/model"`}},
		{"foo/bar", nil, []string{`unknown provider "foo"`, "openai, anthropic"}},
		{"openai/", nil, []string{`"openai/"`, "no model"}},
		{"openai/gpt-4o", nil, []string{"openai: no API key", "set OPENAI_API_KEY"}},
		{"anthropic/claude-sonnet-4-5", nil, []string{"anthropic", "ANTHROPIC_API_KEY"}},
		{"google/gemini-2.5-flash", nil, []string{"google", "GOOGLE_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY"}},
		{"openrouter/x/y", map[string]string{"OPENAI_API_KEY": "k"}, []string{"openrouter", "OPENROUTER_API_KEY"}},
		{"openai-compatible/m", nil, []string{"openai-compatible", "OPENAI_COMPATIBLE_BASE_URL"}},
	}
	for _, tc := range cases {
		_, err := Open(tc.spec, Config{Getenv: env(tc.env)})
		if err == nil {
			t.Errorf("Open(%q) succeeded", tc.spec)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%q): %v\nwant it to mention %s", tc.spec, err, w)
			}
		}
	}
}

// TestCredentials checks where keys and addresses come from by looking at
// what reaches the server.
func TestCredentials(t *testing.T) {
	// The process environment must leak into nothing: openai-go reads
	// $OPENAI_API_KEY by itself unless told otherwise.
	t.Setenv("OPENAI_API_KEY", "sk-process-env")

	type seen struct{ path, auth string }
	var got seen
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		got = seen{r.URL.Path, r.Header.Get("Authorization")}
		answer(w, "ok")
	})
	host := strings.TrimPrefix(srv.URL, "http://")
	cases := []struct {
		name string
		spec string
		cfg  Config
		want seen
	}{
		{"env key and base", "openai/gpt-4o", Config{Getenv: env(map[string]string{
			"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": srv.URL + "/v1",
		})}, seen{"/v1/chat/completions", "Bearer sk-env"}},
		{"config wins over env", "openai/gpt-4o", Config{
			APIKeys:  map[string]string{"openai": "sk-config"},
			BaseURLs: map[string]string{"openai": srv.URL + "/v1"},
			Getenv:   env(map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:1"}),
		}, seen{"/v1/chat/completions", "Bearer sk-config"}},
		{"ollama host without scheme, no key", "ollama/llama3.2", Config{Getenv: env(map[string]string{
			"OLLAMA_HOST": host,
		})}, seen{"/v1/chat/completions", ""}},
		{"openai-compatible with optional key", "openai-compatible/some-model", Config{Getenv: env(map[string]string{
			"OPENAI_COMPATIBLE_BASE_URL": srv.URL + "/api/v1", "OPENAI_COMPATIBLE_API_KEY": "sk-compat",
		})}, seen{"/api/v1/chat/completions", "Bearer sk-compat"}},
		{"openrouter base override", "openrouter/openai/gpt-4o", Config{
			BaseURLs: map[string]string{"openrouter": srv.URL + "/router/v1"},
			Getenv:   env(map[string]string{"OPENROUTER_API_KEY": "sk-or"}),
		}, seen{"/router/v1/chat/completions", "Bearer sk-or"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got = seen{}
			m, err := Open(tc.spec, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Spec() != tc.spec {
				t.Errorf("Spec() = %q", m.Spec())
			}
			if _, err := collect(t, m, hello); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("server saw %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	if got := Available(Config{Getenv: env(nil)}); len(got) != 0 {
		t.Errorf("no credentials: %v", got)
	}
	got := Available(Config{
		APIKeys: map[string]string{"anthropic": "k"},
		Getenv: env(map[string]string{
			"OPENAI_API_KEY":               "k",
			"GOOGLE_GENERATIVE_AI_API_KEY": "k",
			"OPENAI_COMPATIBLE_BASE_URL":   "http://127.0.0.1:8080/v1",
		}),
	})
	want := []string{"openai", "anthropic", "google", "openai-compatible"}
	if !slices.Equal(got, want) {
		t.Errorf("Available = %v, want %v", got, want)
	}
}

func TestOllamaBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:11434":   "http://127.0.0.1:11434/v1",
		"127.0.0.1:11434":          "http://127.0.0.1:11434/v1",
		"https://ollama.example/":  "https://ollama.example/v1",
		"http://gpu-box:11434/v1":  "http://gpu-box:11434/v1",
		"http://gpu-box:11434/v1/": "http://gpu-box:11434/v1",
	} {
		if got := ollamaBaseURL(in); got != want {
			t.Errorf("ollamaBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}
