package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// serveFresh is a Parley as a newcomer starts it: no --model, no keys, so
// on the demo model.
func serveFresh(t *testing.T) *served {
	t.Helper()
	return serveModel(t, nil, "")
}

// The default model saved in Settings applies to the next chat at once,
// without a restart; the page says so.
func TestDefaultModelAppliesAtOnce(t *testing.T) {
	compat := scripted.NewServer()
	defer compat.Close()
	s := serveFresh(t)
	ctx := t.Context()
	a, _ := s.in.Runtime.Agent("")
	if got := a.CurrentModel(); got != DemoModel {
		t.Fatalf("a fresh Parley runs on %s", got)
	}
	for path, v := range map[string]url.Values{
		"/settings/providers/openai-compatible/base": {"url": {compat.URL()}},
		"/settings/providers/openai-compatible/key":  {"key": {"sk-compat-0123456789abcdef"}},
	} {
		if code, body := s.post(t, path, v); code != http.StatusSeeOther {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	const model = "openai-compatible/scripted"
	if code, body := s.post(t, "/settings/model", url.Values{"model": {model}}); code != http.StatusSeeOther {
		t.Fatalf("save the default model: %d %s", code, body)
	}
	if got := a.CurrentModel(); got != model {
		t.Fatalf("after saving %s as the default, new chats use %s", model, got)
	}
	page := s.get(t, "/settings")
	if strings.Contains(page, "next start") || !strings.Contains(page, "<code data-model>"+model+"</code>") {
		t.Errorf("the settings page does not say new chats use %s now", model)
	}
	if welcome := s.get(t, "/"); !strings.Contains(welcome, `value="`+model+`"`) {
		t.Errorf("the welcome screen does not offer %s", model)
	}
	th, err := s.in.Runtime.CreateThread(ctx, agentcore.Thread{ResourceID: "parley"})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := s.in.Runtime.Send(ctx, agentcore.SendRequest{ThreadID: th.ID, Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if sent.Run.Model != model {
		t.Errorf("a new chat's run uses %s, want %s", sent.Run.Model, model)
	}
	if err := s.in.Runtime.Wait(ctx, th.ID); err != nil {
		t.Fatal(err)
	}

	// A --model (or PARLEY_MODEL) still wins, and the page says so.
	if got := (&settings{fixed: "openai/gpt-4.1"}).CurrentModel(); got != "openai/gpt-4.1" {
		t.Errorf("a fixed model gives way to %s", got)
	}
}

// Saving a provider key ends the demo at once: the banner goes, and new
// chats use the provider's model.
func TestKeySavedEndsTheDemo(t *testing.T) {
	s := serveFresh(t)
	if !strings.Contains(s.get(t, "/"), "Demo mode.") {
		t.Fatal("a fresh Parley shows no demo banner")
	}
	if code, body := s.post(t, "/settings/providers/openai/key", url.Values{"key": {"sk-openai-0123456789abcdef"}}); code != http.StatusSeeOther {
		t.Fatalf("save key: %d %s", code, body)
	}
	for _, path := range []string{"/", "/settings"} {
		if strings.Contains(s.get(t, path), "Demo mode.") {
			t.Errorf("%s still shows the demo banner after a key was saved", path)
		}
	}
	a, _ := s.in.Runtime.Agent("")
	if got := a.CurrentModel(); !strings.HasPrefix(got, "openai/") {
		t.Errorf("after an OpenAI key was saved, new chats use %s", got)
	}
}
