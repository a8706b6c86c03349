package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
)

func TestNonLoopbackNeedsToken(t *testing.T) {
	c := Config{Addr: "0.0.0.0:0", DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	if err := Serve(context.Background(), c, Options{}, nil); !errors.Is(err, errExposed) {
		t.Fatalf("Serve on 0.0.0.0 without a token: %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7777": true, "localhost:1": true, "[::1]:80": true,
		"0.0.0.0:7777": false, ":7777": false, "192.168.1.5:7777": false, "garbage": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v", addr, got)
		}
	}
}

func TestPickModel(t *testing.T) {
	env := func(m map[string]string) llm.Config {
		return llm.Config{Getenv: func(k string) string { return m[k] }}
	}
	if got := pickModel(env(nil)); got != DemoModel {
		t.Errorf("no keys: %s", got)
	}
	if got := pickModel(env(map[string]string{"OPENAI_API_KEY": "k"})); !strings.HasPrefix(got, "openai/") {
		t.Errorf("openai key: %s", got)
	}
	if got := pickModel(env(map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})); !strings.HasPrefix(got, "anthropic/") {
		t.Errorf("both keys: %s", got)
	}
}

func TestCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "parley ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	if code := Main([]string{"bogus"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown command") {
		t.Fatalf("bogus: %d %q", code, errb.String())
	}
	if code := Main(nil, &out, &errb); code != 2 {
		t.Fatalf("no args: %d", code)
	}
	errb.Reset()
	if code := Main([]string{"serve", "--addr", "0.0.0.0:0", "--data", t.TempDir()}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "token") {
		t.Fatalf("exposed serve: %d %q", code, errb.String())
	}
}

func TestDemoInstanceWhenNoKeys(t *testing.T) {
	dir := t.TempDir()
	in, err := Open(context.Background(), Config{DataDir: dir, Workspace: dir, Getenv: func(string) string { return "" }}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	a, _ := in.Runtime.Agent("")
	if a.Model != DemoModel || in.Demo == nil {
		t.Fatalf("model %s, demo server %v", a.Model, in.Demo != nil)
	}
	msgs := []agentcore.Message{{Role: agentcore.RoleUser, Content: agentcore.TextContent("hello")}}
	res, err := a.Generate(context.Background(), msgs, agentcore.StreamOptions{})
	if err != nil || !strings.Contains(strings.ToLower(res.Text), "scripted") {
		t.Fatalf("demo reply %q, %v", res.Text, err)
	}
}
