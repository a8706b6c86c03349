package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley/agentcore/llm"
	"parley/storage"
	"parley/ui"
)

// The time limits' flags: a flag wins over its variable, a bad value is
// refused at start by the flag's name, a bad variable by its name.
func TestTimeLimitFlags(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PARLEY_FIRST_TOKEN_TIMEOUT", "soon")
	t.Setenv("PARLEY_IDLE_TIMEOUT", "")
	c, err := parseFlags("serve", []string{"--data", dir, "--workspace", dir, "--first-token-timeout", "15m", "--idle-timeout", "3m"}, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.FirstTokenTimeout != 15*time.Minute || c.IdleTimeout != 3*time.Minute {
		t.Fatalf("first %v, idle %v", c.FirstTokenTimeout, c.IdleTimeout)
	}
	o := withLimits(c, Options{})
	if o.LLM.FirstTokenTimeout != 15*time.Minute || o.LLM.IdleTimeout != 3*time.Minute {
		t.Fatalf("options: %+v", o.LLM)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--idle-timeout", "90"}, `invalid value "90" for flag -idle-timeout: want a positive duration such as 90s or 10m`},
		{[]string{"--first-token-timeout", "-5m"}, `invalid value "-5m" for flag -first-token-timeout`},
		{nil, `PARLEY_FIRST_TOKEN_TIMEOUT="soon": want a positive duration such as 90s or 10m`},
	} {
		_, err := parseFlags("serve", append([]string{"--data", dir, "--workspace", dir}, tc.args...), io.Discard, true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}

	// The desktop takes them too; commands that run no model do not.
	if c, err := parseFlags("desktop", []string{"--data", dir, "--workspace", dir, "--first-token-timeout", "20m"}, io.Discard, false); err != nil || c.FirstTokenTimeout != 20*time.Minute {
		t.Errorf("desktop: %v, %v", c.FirstTokenTimeout, err)
	}
	if _, err := parseFlags("token", []string{"--data", dir, "--first-token-timeout", "20m"}, io.Discard, false); err == nil {
		t.Error("parley token took --first-token-timeout")
	}
}

// A provider's time limits saved in Settings reach its model at once; a
// value that does not read is refused by its field and nothing changes.
func TestLimitsOfSettingsReachTheModel(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	db, err := storage.Open(ctx, filepath.Join(dir, "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	keys, err := OpenKeys(dir, brokenKeyring{})
	if err != nil {
		t.Fatal(err)
	}
	sv := &settings{store: db, keys: keys, base: llm.Config{Getenv: func(string) string { return "" },
		FirstTokenTimeout: time.Hour, MaxRetries: -1}}
	sv.models = newModels(sv.llmConfig())
	if err := sv.SetBaseURL(ctx, "openai-compatible", hang.URL+"/v1"); err != nil {
		t.Fatal(err)
	}

	var bad *ui.LimitError
	err = sv.SetLimits(ctx, "openai-compatible", "90", "soon")
	if !errors.As(err, &bad) || !strings.Contains(bad.FirstToken, `Wait for the first token: "90" is not a time limit`) ||
		!strings.Contains(bad.Idle, `Silence limit: "soon" is not a time limit`) {
		t.Fatalf("error %#v", err)
	}
	if err := sv.SetLimits(ctx, "openai-compatible", " 1s ", "5m0s"); err != nil {
		t.Fatal(err)
	}

	views, err := sv.Providers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		switch {
		case v.FirstTokenDefault != "1h" || v.IdleDefault != "90s":
			t.Errorf("%s: placeholders %q, %q", v.Name, v.FirstTokenDefault, v.IdleDefault)
		case v.Name == "openai-compatible" && (v.FirstToken != "1s" || v.Idle != "5m"):
			t.Errorf("saved limits shown as %q, %q", v.FirstToken, v.Idle)
		case v.Name != "openai-compatible" && (v.FirstToken != "" || v.Idle != ""):
			t.Errorf("%s shows limits %q, %q", v.Name, v.FirstToken, v.Idle)
		}
	}
	if p, err := loadPreferences(ctx, db); err != nil || p.Limits["openai-compatible"] != (Limits{FirstToken: "1s", Idle: "5m"}) {
		t.Fatalf("stored %+v, %v", p.Limits, err)
	}

	// The model opened now waits 1s for its first token, not the hour.
	m, err := sv.models.open("openai-compatible/slow")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, err = range m.Stream(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}) {
		if err != nil {
			break
		}
	}
	if !errors.Is(err, llm.ErrStalled) || !strings.Contains(err.Error(), "no answer from the provider in 1s") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("gave up after %v", d)
	}

	// Cleared, the global limit is back.
	if err := sv.SetLimits(ctx, "openai-compatible", "", ""); err != nil {
		t.Fatal(err)
	}
	if cfg := sv.llmConfig(); len(cfg.FirstTokenTimeouts) != 0 || len(cfg.IdleTimeouts) != 0 {
		t.Errorf("limits left after clearing: %v, %v", cfg.FirstTokenTimeouts, cfg.IdleTimeouts)
	}
}
