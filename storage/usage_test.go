package storage

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"parley/agentcore"
)

func reply(threadID, model string, u *agentcore.Usage, context int64) agentcore.Message {
	c := agentcore.TextContent("answer")
	c.Metadata = map[string]any{}
	if model != "" {
		c.Metadata["model"] = model
	}
	if u != nil {
		c.Metadata[agentcore.MetaUsage] = *u
	}
	if context > 0 {
		c.Metadata[agentcore.MetaContextTokens] = context
	}
	return agentcore.Message{ThreadID: threadID, Role: agentcore.RoleAssistant, Content: c}
}

// ThreadUsage sums the replies' recorded usage per model, ignores user
// messages and replies without usage, and reports the latest context fill.
func TestThreadUsage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	other := mustThread(t, db, agentcore.Thread{})

	empty, err := db.ThreadUsage(ctx, th.ID)
	if err != nil || empty.Replies != 0 || len(empty.ByModel) != 0 || empty.ContextTokens != 0 {
		t.Fatalf("empty thread: %+v, %v", empty, err)
	}

	u1 := agentcore.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120, CachedTokens: 10}
	u2 := agentcore.Usage{InputTokens: 300, OutputTokens: 40, TotalTokens: 340, ReasoningTokens: 7}
	u3 := agentcore.Usage{InputTokens: 50, OutputTokens: 5, TotalTokens: 55}
	mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent("q")})
	mustAppend(t, db, reply(th.ID, "openai/gpt-4o", &u1, 130))
	mustAppend(t, db, reply(th.ID, "", nil, 0)) // from before usage was kept
	mustAppend(t, db, reply(th.ID, "openai/gpt-4o", &u2, 450))
	mustAppend(t, db, reply(th.ID, "anthropic/claude-sonnet-4", &u3, 0)) // no context recorded
	mustAppend(t, db, reply(other.ID, "openai/gpt-4o", &u1, 999))

	got, err := db.ThreadUsage(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := agentcore.ThreadUsage{
		ByModel: map[string]agentcore.Usage{
			"openai/gpt-4o":             {InputTokens: 400, OutputTokens: 60, TotalTokens: 460, ReasoningTokens: 7, CachedTokens: 10},
			"anthropic/claude-sonnet-4": u3,
		},
		Replies: 3, ContextTokens: 450, ContextModel: "openai/gpt-4o",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if tot := got.Total(); tot.InputTokens != 450 || tot.OutputTokens != 65 {
		t.Fatalf("total %+v", tot)
	}
}

// A streaming reply counts once it ends (its figures are copied out with
// its final write); a reply that recorded no model is costed at its run's.
func TestThreadUsageCountsEndedReplies(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	if err := db.CreateRun(ctx, agentcore.Run{ID: "run1", ThreadID: th.ID, Model: "google/gemini-2.5-flash"}); err != nil {
		t.Fatal(err)
	}
	m := reply(th.ID, "", &agentcore.Usage{InputTokens: 9, OutputTokens: 1}, 10)
	m.RunID, m.Status = "run1", agentcore.StatusStreaming
	m = mustAppend(t, db, m)
	got, err := db.ThreadUsage(ctx, th.ID)
	if err != nil || got.Replies != 0 {
		t.Fatalf("streaming reply counted: %+v, %v", got, err)
	}
	if err := db.UpdateMessage(ctx, m.ID, m.Content, agentcore.StatusInterrupted); err != nil {
		t.Fatal(err)
	}
	got, err = db.ThreadUsage(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := got.ByModel["google/gemini-2.5-flash"]; !ok || u.InputTokens != 9 || got.ContextModel != "google/gemini-2.5-flash" || got.ContextTokens != 10 {
		t.Fatalf("%+v", got)
	}
	// Changed content is copied again.
	m.Content.Metadata[agentcore.MetaUsage] = agentcore.Usage{InputTokens: 20, OutputTokens: 2}
	if err := db.UpdateMessage(ctx, m.ID, m.Content, agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.ThreadUsage(ctx, th.ID); got.Total().InputTokens != 20 {
		t.Fatalf("after update: %+v", got)
	}
}

// The context fill is the latest reply's: one buried under more than
// contextLookback later messages is not reported.
func TestThreadUsageContextLookback(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	mustAppend(t, db, reply(th.ID, "openai/gpt-4o", &agentcore.Usage{InputTokens: 1}, 777))
	for i := range contextLookback {
		mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent(fmt.Sprint(i))})
		if i == contextLookback-2 {
			if got, _ := db.ThreadUsage(ctx, th.ID); got.ContextTokens != 777 {
				t.Fatalf("within the lookback: %+v", got)
			}
		}
	}
	got, err := db.ThreadUsage(ctx, th.ID)
	if err != nil || got.ContextTokens != 0 || got.Replies != 1 {
		t.Fatalf("beyond the lookback: %+v, %v", got, err)
	}
}

// Replies stored before migration 0006 are counted too.
func TestThreadUsageMigratesOldReplies(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	mustAppend(t, db, reply(th.ID, "openai/gpt-4o", &agentcore.Usage{InputTokens: 7, OutputTokens: 3}, 10))
	// Forget the copy and re-run the migration's backfill.
	if _, err := db.writer.ExecContext(ctx, `UPDATE messages SET input_tokens = NULL, usage_model = NULL`); err != nil {
		t.Fatal(err)
	}
	all, _ := migrations()
	var sql string
	for _, m := range all {
		if m.version == 6 {
			sql = m.sql[strings.LastIndex(m.sql, "-- Replies stored before"):]
		}
	}
	if _, err := db.writer.ExecContext(ctx, sql); err != nil {
		t.Fatal(err)
	}
	got, err := db.ThreadUsage(ctx, th.ID)
	if err != nil || got.ByModel["openai/gpt-4o"].InputTokens != 7 {
		t.Fatalf("%+v, %v", got, err)
	}
}

// BenchmarkThreadUsage sums a 10,000-message thread: the header reads it
// when the thread opens and whenever a run ends. "recorded": every reply
// has usage; "none": no reply has (replies from before usage was kept,
// imported chats), so nothing is found.
func BenchmarkThreadUsage(b *testing.B) {
	for _, recorded := range []bool{true, false} {
		name := map[bool]string{true: "recorded", false: "none"}[recorded]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			db := openTest(b)
			u := agentcore.Usage{InputTokens: 1200, OutputTokens: 300, TotalTokens: 1500}
			var in []agentcore.Message
			for i := range 10_000 {
				if i%2 == 0 {
					in = append(in, agentcore.Message{Role: agentcore.RoleUser, Content: agentcore.TextContent(fmt.Sprintf("question %d with some words in it", i))})
					continue
				}
				m := agentcore.Message{Role: agentcore.RoleAssistant, Content: agentcore.TextContent(fmt.Sprintf("An answer %d of a few hundred bytes. %0300d", i, i))}
				if recorded {
					m.Content.Metadata = map[string]any{"model": "openai/gpt-4o", agentcore.MetaUsage: u, agentcore.MetaContextTokens: i}
				}
				in = append(in, m)
			}
			stored, err := db.ImportThreads(ctx, []agentcore.ThreadImport{{Thread: agentcore.Thread{Title: "long"}, Messages: in}})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := db.ThreadUsage(ctx, stored[0].ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
