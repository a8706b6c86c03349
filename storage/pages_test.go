package storage

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"parley/agentcore"
)

// Paging a long thread: the page before a cursor, the page after one, and
// the window between two, at every boundary.
func TestListMessagesPages(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	const n = 23
	for i := 1; i <= n; i++ {
		mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser, Content: agentcore.TextContent(fmt.Sprint(i))})
	}
	seqs := func(q agentcore.MessageQuery) []int64 {
		t.Helper()
		ms, err := db.ListMessages(ctx, th.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, m := range ms {
			if m.Content.Text() != fmt.Sprint(m.Seq) {
				t.Fatalf("message %d holds %q", m.Seq, m.Content.Text())
			}
			out = append(out, m.Seq)
		}
		return out
	}
	span := func(from, to int64) []int64 {
		out := []int64{}
		for s := from; s <= to; s++ {
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name string
		q    agentcore.MessageQuery
		want []int64
	}{
		{"latest page", agentcore.MessageQuery{Limit: 10, Last: true}, span(14, 23)},
		{"page before the latest", agentcore.MessageQuery{BeforeSeq: 14, Limit: 10, Last: true}, span(4, 13)},
		{"last, short page", agentcore.MessageQuery{BeforeSeq: 4, Limit: 10, Last: true}, span(1, 3)},
		{"before the first", agentcore.MessageQuery{BeforeSeq: 1, Limit: 10, Last: true}, span(1, 0)},
		{"before past the end", agentcore.MessageQuery{BeforeSeq: 99, Limit: 3, Last: true}, span(21, 23)},
		{"page after a cursor", agentcore.MessageQuery{AfterSeq: 5, Limit: 4}, span(6, 9)},
		{"window between cursors", agentcore.MessageQuery{AfterSeq: 5, BeforeSeq: 8, Limit: 10}, span(6, 7)},
		{"latest of a window", agentcore.MessageQuery{AfterSeq: 5, BeforeSeq: 12, Limit: 2, Last: true}, span(10, 11)},
		{"empty window", agentcore.MessageQuery{AfterSeq: 5, BeforeSeq: 6}, span(1, 0)},
		{"everything before", agentcore.MessageQuery{BeforeSeq: 5}, span(1, 4)},
		{"no bounds", agentcore.MessageQuery{}, span(1, n)},
	}
	for _, tt := range tests {
		if got := seqs(tt.q); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	// Walking back page by page meets every message once.
	var all []int64
	before := int64(0)
	for {
		page := seqs(agentcore.MessageQuery{BeforeSeq: before, Limit: 10, Last: true})
		if len(page) == 0 {
			break
		}
		all = append(page, all...)
		before = page[0]
	}
	if !reflect.DeepEqual(all, span(1, n)) {
		t.Errorf("walked back: %v", all)
	}
}
