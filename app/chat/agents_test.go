package chat

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/storage"
)

func testAgents(t *testing.T) (*Agents, *storage.DB) {
	t.Helper()
	db, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tool := &agentcore.Tool{}
	builtin := &agentcore.Agent{ID: "parley", Name: "Parley", Instructions: agentcore.Text("Be Parley."),
		Tools: map[string]*agentcore.Tool{"view": tool, "find_files": tool, "write_file": tool, "execute_command": tool,
			"ask_user": tool, "updateWorkingMemory": tool}}
	return NewAgents(db, builtin, nil), db
}

// TestAgentsCRUD: create, read, edit, duplicate and delete an agent; the
// built-in one is viewable, duplicable, neither editable nor deletable.
func TestAgentsCRUD(t *testing.T) {
	ctx := t.Context()
	a, _ := testAgents(t)
	d, err := a.Create(ctx, AgentDef{Name: "  Code Reviewer ", Instructions: "Review code.", Tools: []string{"view", "find_files", "view"},
		Policies: map[string]string{"edit": PolicyDeny}, Mode: ModePlan, Model: "openai/gpt-4.1"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "code-reviewer" || d.Name != "Code Reviewer" || !slices.Equal(d.Tools, []string{"find_files", "view"}) || d.Mode != ModePlan {
		t.Fatalf("created %+v", d)
	}
	got, err := a.Get(ctx, d.ID)
	if err != nil || got.Name != d.Name || got.Policies["edit"] != PolicyDeny || got.Model != "openai/gpt-4.1" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := a.Create(ctx, AgentDef{Name: "code reviewer", Instructions: "x"}); !isField(err, "name") {
		t.Fatalf("a second agent of the same name: %v", err)
	}
	if _, err := a.Create(ctx, AgentDef{Name: "parley", Instructions: "x"}); !isField(err, "name") {
		t.Fatalf("an agent named as the built-in one: %v", err)
	}
	got.Description, got.Tools = "Reads, never writes.", nil
	if upd, err := a.Update(ctx, got); err != nil || upd.Description != "Reads, never writes." || len(upd.Tools) != 0 {
		t.Fatalf("update = %+v, %v", upd, err)
	}
	dup, err := a.Duplicate(ctx, d.ID)
	if err != nil || dup.ID == d.ID || dup.Name != "Code Reviewer (copy)" || dup.Instructions != "Review code." {
		t.Fatalf("duplicate = %+v, %v", dup, err)
	}
	dup2, err := a.Duplicate(ctx, d.ID)
	if err != nil || dup2.Name != "Code Reviewer (copy) (2)" || dup2.ID == dup.ID {
		t.Fatalf("second duplicate = %+v, %v", dup2, err)
	}
	b, err := a.Duplicate(ctx, "parley")
	if err != nil || b.Name != "Parley (copy)" || b.Instructions != "Be Parley." || slices.Contains(b.Tools, "updateWorkingMemory") || len(b.Tools) != 5 {
		t.Fatalf("duplicate of the built-in agent = %+v, %v", b, err)
	}
	list, err := a.List(ctx)
	if err != nil || len(list) != 4 || list[0].ID != d.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := a.Update(ctx, AgentDef{ID: "parley", Name: "Mine", Instructions: "x"}); err == nil {
		t.Fatal("the built-in agent was changed")
	}
	if err := a.Delete(ctx, "parley"); err == nil {
		t.Fatal("the built-in agent was deleted")
	}
	if err := a.Delete(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, d.ID); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	// A chat of a deleted agent goes on with the built-in one.
	if _, ok := a.Of(ctx, Settings{Agent: d.ID}); ok {
		t.Fatal("a deleted agent still runs its chats")
	}
	s, err := a.NewChat(ctx, dup.ID)
	if err != nil || s.Agent != dup.ID || s.Mode != ModePlan || s.Model != "openai/gpt-4.1" {
		t.Fatalf("new chat settings = %+v, %v", s, err)
	}
	if got := Of(agentcore.Thread{Metadata: Metadata(s)}); got.Agent != dup.ID || got.Mode != ModePlan {
		t.Fatalf("the chat keeps %+v", got)
	}
	// An imported chat may not pick one of this machine's agents (their
	// tools and policies are the local user's).
	if !slices.Contains(MachineKeys(), keyAgent) {
		t.Fatal("a chat's agent is not a machine setting")
	}
}

func isField(err error, field string) bool {
	var ae *AgentError
	return errors.As(err, &ae) && ae.Field == field
}

// TestAgentsRefuseHostileValues: what cannot be an agent is refused,
// naming the field; a name with markup or quotes is kept as text (the
// page escapes it) and gives a plain id.
func TestAgentsRefuseHostileValues(t *testing.T) {
	ctx := t.Context()
	a, _ := testAgents(t)
	for _, name := range []string{`<img src=x onerror=alert(1)>`, `'); alert(1); ('`} {
		d, err := a.Create(ctx, AgentDef{Name: name, Instructions: "x"})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if d.Name != name || !agentcore.ValidID(d.ID) || strings.ContainsAny(d.ID, `<>'"();= `) {
			t.Fatalf("%q stored as %+v", name, d)
		}
	}
	for _, name := range []string{"New", "import"} {
		if d, err := a.Create(ctx, AgentDef{Name: name, Instructions: "x"}); err != nil || d.ID == "new" || d.ID == "import" {
			t.Fatalf("%q became %+v, %v: its id is a word of Settings' addresses", name, d, err)
		}
	}
	for _, c := range []struct {
		field string
		def   AgentDef
	}{
		{"name", AgentDef{Name: "  ", Instructions: "x"}},
		{"name", AgentDef{Name: "two\nlines", Instructions: "x"}},
		{"name", AgentDef{Name: strings.Repeat("n", MaxAgentName+1), Instructions: "x"}},
		{"instructions", AgentDef{Name: "a", Instructions: ""}},
		{"instructions", AgentDef{Name: "a", Instructions: strings.Repeat("i", 10<<20)}},
		{"instructions", AgentDef{Name: "a", Instructions: "\xff\xfe"}},
		{"description", AgentDef{Name: "a", Instructions: "x", Description: strings.Repeat("d", MaxAgentDescription+1)}},
		{"tools", AgentDef{Name: "a", Instructions: "x", Tools: []string{"rm_rf"}}},
		{"tools", AgentDef{Name: "a", Instructions: "x", Tools: []string{"updateWorkingMemory"}}},
		{"policies", AgentDef{Name: "a", Instructions: "x", Policies: map[string]string{"edit": "sometimes"}}},
		{"policies", AgentDef{Name: "a", Instructions: "x", Policies: map[string]string{"<b>": PolicyAsk}}},
		{"mode", AgentDef{Name: "a", Instructions: "x", Mode: "yolo"}},
		{"model", AgentDef{Name: "a", Instructions: "x", Model: "gpt 4"}},
		{"model", AgentDef{Name: "a", Instructions: "x", Model: "no-provider"}},
	} {
		if _, err := a.Create(ctx, c.def); !isField(err, c.field) {
			t.Errorf("%s %.60q: %v, want an error naming %s", c.field, c.def, err, c.field)
		}
	}
	if list, _ := a.List(ctx); len(list) != 4 {
		t.Fatalf("%d agents stored, want only the 4 good ones", len(list))
	}
}

// TestAgentExportImport: an exported agent imports as a new agent (a new
// id, a free name); a bad file is refused naming the field, and nothing
// is stored.
func TestAgentExportImport(t *testing.T) {
	ctx := t.Context()
	a, _ := testAgents(t)
	d, err := a.Create(ctx, AgentDef{Name: "Writer", Description: "Drafts text.", Instructions: "Write well.", Tools: []string{"view", "write_file"},
		Policies: map[string]string{"edit": PolicyAllow}, Mode: ModeBuild})
	if err != nil {
		t.Fatal(err)
	}
	file, err := a.Export(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	if err := json.Unmarshal(file, &shape); err != nil || shape["format"] != AgentFileFormat || shape["version"] != 1.0 {
		t.Fatalf("exported %s", file)
	}
	if strings.Contains(string(file), `"id"`) {
		t.Errorf("the file carries an id: %s", file)
	}
	in, err := a.Import(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if in.ID == d.ID || in.Name != "Writer (2)" || in.Instructions != d.Instructions || !slices.Equal(in.Tools, d.Tools) || in.Policies["edit"] != PolicyAllow {
		t.Fatalf("imported %+v from %+v", in, d)
	}
	if _, err := a.Export(ctx, "parley"); err != nil {
		t.Fatalf("export the built-in agent: %v", err)
	}

	good := func(edit func(m map[string]any)) []byte {
		var f map[string]any
		_ = json.Unmarshal(file, &f)
		edit(f["agent"].(map[string]any))
		b, _ := json.Marshal(f)
		return b
	}
	for _, c := range []struct {
		field string
		file  []byte
	}{
		{"", []byte(`not json`)},
		{"", []byte(`[1,2]`)},
		{"", []byte(`{"format":"parley-agent","version":1,"agent":{"name":"a","instructions":"x","tools":[]}} {}`)},
		{"format", []byte(`{"format":"other","version":1,"agent":{}}`)},
		{"version", []byte(`{"format":"parley-agent","version":2,"agent":{}}`)},
		{"agent", []byte(`{"format":"parley-agent","version":1}`)},
		{"tools", good(func(m map[string]any) { m["tools"] = []any{"view", "rm_rf"} })},
		{"tools", good(func(m map[string]any) { m["tools"] = "view" })},
		{"tools", good(func(m map[string]any) { m["tools"] = []any{1, 2} })},
		{"name", good(func(m map[string]any) { m["name"] = 42 })},
		{"name", good(func(m map[string]any) { m["name"] = "" })},
		{"instructions", good(func(m map[string]any) { m["instructions"] = strings.Repeat("x", 10<<20) })},
		{"instructions", good(func(m map[string]any) { m["instructions"] = map[string]any{"a": 1} })},
		{"mode", good(func(m map[string]any) { m["mode"] = "plan'); alert(1); ('" })},
		{"policies", good(func(m map[string]any) { m["policies"] = map[string]any{"edit": 1} })},
		{"id", good(func(m map[string]any) { m["id"] = "parley" })},
	} {
		_, err := a.Import(ctx, c.file)
		var ae *AgentError
		if !errors.As(err, &ae) || ae.Field != c.field {
			t.Errorf("import %.80s: %v, want an error naming %q", c.file, err, c.field)
		}
	}
	if list, _ := a.List(ctx); len(list) != 2 {
		t.Fatalf("%d agents after the bad imports, want 2", len(list))
	}
}
