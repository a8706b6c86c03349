package storage

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"parley/agentcore"
)

// indexRow is what the index holds of a message: its search entry and its
// usage columns.
type indexRow struct {
	Tools, Text           *string
	Model                 *string
	Input, Output, Contxt *int64
}

func indexOf(t *testing.T, db *DB, id string) (got, want indexRow) {
	t.Helper()
	ctx := context.Background()
	err := db.reader.QueryRowContext(ctx, `SELECT f.tools, f.text, m.usage_model, m.input_tokens, m.output_tokens, m.context_tokens
		FROM messages AS m LEFT JOIN messages_fts AS f ON f.rowid = m.pk << 12 WHERE m.id = ?`, id).
		Scan(&got.Tools, &got.Text, &got.Model, &got.Input, &got.Output, &got.Contxt)
	if err != nil {
		t.Fatal(err)
	}
	// What message_search_docs, the SQL the triggers used, makes of it.
	err = db.reader.QueryRowContext(ctx, `SELECT d.tools, d.text FROM messages AS m
		LEFT JOIN message_search_docs AS d ON d.pk = m.pk WHERE m.id = ?`, id).Scan(&want.Tools, &want.Text)
	if err != nil {
		t.Fatal(err)
	}
	return got, want
}

func ptr[T any](v T) *T { return &v }

// Every write that ends a message's streaming indexes it, as the triggers
// did before 0011: the final UpdateMessage (from Go), MarkMessage and the
// recovery at Open (from the stored content). The search entry Go makes is
// the one message_search_docs makes; usage columns are an assistant's only.
func TestIndexFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "parley.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	th := mustThread(t, db, agentcore.Thread{})
	if err := db.CreateRun(ctx, agentcore.Run{ID: "run1", ThreadID: th.ID, Model: "openai/gpt-5"}); err != nil {
		t.Fatal(err)
	}
	content := func(text string) agentcore.Content {
		return agentcore.Content{Format: 2, Content: text, Parts: []agentcore.Part{
			{Type: "text", Text: "Let me \x01look"},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "result", ToolCallID: "c1", ToolName: "read_file"}},
			{Type: "step-start"},
			{Type: "text", Text: text},
			{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "call", ToolCallID: "c2", ToolName: "write_file"}},
		}, Metadata: map[string]any{agentcore.MetaUsage: agentcore.Usage{InputTokens: 5, OutputTokens: 2}, agentcore.MetaContextTokens: 7}}
	}
	streaming := func(role agentcore.Role, text string) agentcore.Message {
		return mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: role, RunID: "run1", Content: content(text), Status: agentcore.StatusStreaming})
	}
	final, marked, crashed, user := streaming(agentcore.RoleAssistant, "final"), streaming(agentcore.RoleAssistant, "marked"),
		streaming(agentcore.RoleAssistant, "crashed"), streaming(agentcore.RoleUser, "user")
	for _, m := range []agentcore.Message{final, marked, crashed, user} {
		if got, _ := indexOf(t, db, m.ID); got != (indexRow{}) {
			t.Fatalf("streaming message %s indexed: %+v", m.Content.Parts[3].Text, got)
		}
	}

	if err := db.UpdateMessage(ctx, final.ID, content("final\x02 words"), agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateMessage(ctx, user.ID, content("user words"), agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkMessage(ctx, marked.ID, agentcore.StatusError, map[string]string{"model": "anthropic/claude", "error": "boom"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // as if Parley crashed mid-stream
		t.Fatal(err)
	}
	db = openAt(t, path)

	for _, c := range []struct {
		m                  agentcore.Message
		text, model, tools string
	}{
		{final, "Let me lookfinal words", "openai/gpt-5", "read_file write_file"},
		{marked, "Let me lookmarked", "anthropic/claude", "read_file write_file"},
		{crashed, "Let me lookcrashed", "openai/gpt-5", "read_file write_file"},
		{user, "Let me lookuser words", "", "read_file write_file"},
	} {
		got, want := indexOf(t, db, c.m.ID)
		if got.Text == nil || *got.Text != c.text || got.Tools == nil || *got.Tools != c.tools ||
			!reflect.DeepEqual(got.Text, want.Text) || !reflect.DeepEqual(got.Tools, want.Tools) {
			t.Errorf("%s: search entry %v %v, want %q %q (the view: %v %v)", c.text, got.Tools, got.Text, c.tools, c.text, want.Tools, want.Text)
		}
		usage := indexRow{Model: ptr(c.model), Input: ptr[int64](5), Output: ptr[int64](2), Contxt: ptr[int64](7)}
		if c.m.Role == agentcore.RoleUser {
			usage = indexRow{}
		}
		got.Tools, got.Text = nil, nil
		if !reflect.DeepEqual(got, usage) {
			t.Errorf("%s: usage %+v, want %+v", c.text, got, usage)
		}
	}
	if ids := search(t, db, "words"); len(ids) != 2 {
		t.Errorf("search finds %v", ids)
	}
}

// A reply's text is stored once: content.content, the text of its text
// parts, is left out of the stored JSON and made again on read, unless it
// says something else.
func TestContentTextStoredOnce(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	two := agentcore.Content{Format: 2, Content: "one two", Parts: []agentcore.Part{
		{Type: "text", Text: "one "}, {Type: "step-start"}, {Type: "text", Text: "two"}}}
	odd := agentcore.TextContent("the parts")
	odd.Content = "something else"
	for _, c := range []agentcore.Content{agentcore.TextContent("just one"), two, odd, {Format: 2, Parts: []agentcore.Part{}}} {
		m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant, Content: c})
		var stored string
		if err := db.reader.QueryRowContext(ctx, `SELECT coalesce(content ->> '$.content', '') FROM messages WHERE id = ?`, m.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: c.Content}[c.Content != c.Text()]; stored != want {
			t.Errorf("%q: stored content.content %q, want %q", c.Content, stored, want)
		}
		got, err := db.GetMessage(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content.Content != c.Content {
			t.Errorf("read back %q, want %q", got.Content.Content, c.Content)
		}
	}
}
