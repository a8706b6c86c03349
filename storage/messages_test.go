package storage

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"parley/agentcore"
)

// search returns the ids of messages whose text matches the FTS5 query.
func search(t testing.TB, db *DB, q string) []string {
	t.Helper()
	rows, err := db.reader.QueryContext(context.Background(), `SELECT DISTINCT m.id FROM messages_fts AS f
		JOIN messages AS m ON m.pk = f.rowid >> 12 WHERE messages_fts MATCH ? ORDER BY m.pk`, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestListMessages(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	other := mustThread(t, db, agentcore.Thread{})
	for i := 1; i <= 5; i++ {
		m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
			Content: agentcore.TextContent(fmt.Sprint(i))})
		if m.Seq != int64(i) || m.Status != agentcore.StatusComplete || m.ID == "" || m.CreatedAt.IsZero() {
			t.Fatalf("append %d returned %+v", i, m)
		}
		mustAppend(t, db, agentcore.Message{ThreadID: other.ID, Role: agentcore.RoleUser}) // seqs are per thread
	}

	tests := []struct {
		name string
		q    agentcore.MessageQuery
		want []int64
	}{
		{"all", agentcore.MessageQuery{}, []int64{1, 2, 3, 4, 5}},
		{"limit", agentcore.MessageQuery{Limit: 2}, []int64{1, 2}},
		{"last", agentcore.MessageQuery{Limit: 2, Last: true}, []int64{4, 5}},
		{"last more than there are", agentcore.MessageQuery{Limit: 9, Last: true}, []int64{1, 2, 3, 4, 5}},
		{"last without limit", agentcore.MessageQuery{Last: true}, []int64{1, 2, 3, 4, 5}},
		{"after", agentcore.MessageQuery{AfterSeq: 3}, []int64{4, 5}},
		{"after with limit", agentcore.MessageQuery{AfterSeq: 1, Limit: 2}, []int64{2, 3}},
		{"after with last", agentcore.MessageQuery{AfterSeq: 1, Limit: 2, Last: true}, []int64{4, 5}},
		{"after the end", agentcore.MessageQuery{AfterSeq: 5}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := db.ListMessages(ctx, th.ID, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, m := range ms {
				seqs = append(seqs, m.Seq)
				if m.Content.Text() != fmt.Sprint(m.Seq) {
					t.Errorf("message %d has text %q", m.Seq, m.Content.Text())
				}
			}
			if !reflect.DeepEqual(seqs, tt.want) {
				t.Errorf("seqs %v, want %v", seqs, tt.want)
			}
		})
	}
	if ms, err := db.ListMessages(ctx, "nope", agentcore.MessageQuery{}); err != nil || len(ms) != 0 {
		t.Errorf("unknown thread: %v, %v; want no messages", ms, err)
	}
}

func TestAppendBumpsThread(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{CreatedAt: mustTime(1000)})
	mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser})
	got, err := db.GetThread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.UpdatedAt.After(th.UpdatedAt) {
		t.Errorf("UpdatedAt %v not bumped past %v", got.UpdatedAt, th.UpdatedAt)
	}
}

func TestUpdateMessage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
		Status: agentcore.StatusStreaming, Content: agentcore.TextContent("")})
	c := agentcore.TextContent("done now")
	if err := db.UpdateMessage(ctx, m.ID, c, agentcore.StatusError); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetMessage(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != agentcore.StatusError || !reflect.DeepEqual(got.Content, c) || got.Seq != m.Seq {
		t.Errorf("after update: %+v", got)
	}
}

func TestSearchIndex(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	fox := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("The quick brown fox")})
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
		Status: agentcore.StatusStreaming, Content: agentcore.TextContent("Café")})

	// Only text parts are indexed, not reasoning or tool arguments.
	c := agentcore.Content{Format: 2, Parts: []agentcore.Part{
		{Type: "reasoning", Text: "ponder"},
		{Type: "text", Text: "a zebra "},
		{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{State: "call", ToolCallID: "c",
			ToolName: "grep", Args: []byte(`{"pattern":"needle"}`)}},
		{Type: "text", Text: "and an okapi"},
	}}
	if got := search(t, db, "cafe"); len(got) != 0 {
		t.Errorf("search finds a message still streaming: %v", got)
	}
	if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent("Café"), agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if got := search(t, db, "cafe"); !reflect.DeepEqual(got, []string{m.ID}) {
		t.Errorf("search cafe (diacritics folded) = %v", got)
	}
	if err := db.UpdateMessage(ctx, m.ID, c, agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"fox", []string{fox.ID}},
		{"zebra", []string{m.ID}},
		{"okapi", []string{m.ID}},
		{"cafe", nil}, // replaced by the update
		{"ponder", nil},
		{"needle", nil},
	}
	for _, tt := range tests {
		if got := search(t, db, tt.query); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("search %q = %v, want %v", tt.query, got, tt.want)
		}
	}
}

// TestConcurrentStreaming runs 20 streaming writers at once, some sharing a
// thread, with readers alongside: no write may fail (in particular with
// "database is locked") and every thread's seqs must be 1..n.
func TestConcurrentStreaming(t *testing.T) {
	const (
		writers     = 20
		sharedEvery = 4 // writers i, i+4, i+8... with i < 2 share threads; the rest have their own
		updates     = 100
		appendEvery = 25
	)
	ctx := context.Background()
	db := openTest(t)

	threads := map[int]string{}
	threadOf := func(w int) int {
		if w%sharedEvery < 2 {
			return w % sharedEvery // threads 0 and 1 are shared
		}
		return w
	}
	perThread := map[string]int{}
	for w := range writers {
		k := threadOf(w)
		if _, ok := threads[k]; !ok {
			threads[k] = mustThread(t, db, agentcore.Thread{Title: fmt.Sprint(k)}).ID
		}
		perThread[threads[k]] += 2 + updates/appendEvery
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	finals := make([]string, writers)
	ids := make([]string, writers)
	for w := range writers {
		thread := threads[threadOf(w)]
		wg.Go(func() {
			if _, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: thread, Role: agentcore.RoleUser,
				Content: agentcore.TextContent(fmt.Sprintf("question %d", w))}); err != nil {
				fail(err)
				return
			}
			m, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: thread, Role: agentcore.RoleAssistant,
				Status: agentcore.StatusStreaming, Content: agentcore.TextContent("")})
			if err != nil {
				fail(err)
				return
			}
			ids[w] = m.ID
			var text strings.Builder
			for i := range updates {
				fmt.Fprintf(&text, "token%d ", i)
				if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent(text.String()),
					agentcore.StatusStreaming); err != nil {
					fail(err)
				}
				if i%appendEvery == appendEvery-1 {
					if _, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: thread,
						Role: agentcore.RoleSystem, Content: agentcore.TextContent("note")}); err != nil {
						fail(err)
					}
					if _, err := db.ListMessages(ctx, thread, agentcore.MessageQuery{Limit: 5, Last: true}); err != nil {
						fail(err)
					}
				}
			}
			finals[w] = text.String()
			if err := db.UpdateMessage(ctx, m.ID, agentcore.TextContent(text.String()),
				agentcore.StatusComplete); err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "busy") {
			t.Errorf("lock error: %v", err)
		} else {
			t.Error(err)
		}
	}

	for thread, n := range perThread {
		ms, err := db.ListMessages(ctx, thread, agentcore.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != n {
			t.Errorf("thread %s has %d messages, want %d", thread, len(ms), n)
		}
		for i, m := range ms {
			if m.Seq != int64(i+1) {
				t.Errorf("thread %s: message %d has seq %d", thread, i, m.Seq)
				break
			}
		}
	}
	for w, id := range ids {
		m, err := db.GetMessage(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != agentcore.StatusComplete || m.Content.Text() != finals[w] {
			t.Errorf("writer %d: final message status %q, text %d bytes; want complete, %d bytes",
				w, m.Status, len(m.Content.Text()), len(finals[w]))
		}
	}
}

// BenchmarkUpdateMessage measures one streaming flush: rewriting an
// assistant message that grows by a few tokens each time, as a run does
// every flush interval. After maxTokens updates a new message starts, so
// the size stays that of a long answer however large b.N is.
func BenchmarkUpdateMessage(b *testing.B) {
	const maxTokens = 2000 // ~18 KB of text, a long answer
	ctx := context.Background()
	db := openTest(b)
	th := mustThread(b, db, agentcore.Thread{})
	var (
		id   string
		text strings.Builder
		n    int
	)
	for b.Loop() {
		if n%maxTokens == 0 {
			b.StopTimer()
			id = mustAppend(b, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant,
				Status: agentcore.StatusStreaming}).ID
			text.Reset()
			b.StartTimer()
		}
		n++
		fmt.Fprintf(&text, "word%04d ", n%maxTokens)
		if err := db.UpdateMessage(ctx, id, agentcore.TextContent(text.String()),
			agentcore.StatusStreaming); err != nil {
			b.Fatal(err)
		}
	}
}
