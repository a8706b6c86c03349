package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"parley/agentcore"
)

const (
	benchChat   = 10_000 // messages on the active branch
	benchBranch = 5      // every benchBranch-th reply was regenerated once: 1,000 in 10,000 messages
	benchPage   = 50     // the page a chat opens on
)

// seedBranches stores a chat of n active messages, alternately a
// question and a reply, as one import (AppendMessage would take a
// transaction each). With branched, every benchBranch-th reply has an
// older version, regenerated at once: an inactive sibling just before it,
// as RewindTo and AppendMessage leave it. It returns the thread and the
// first regenerated reply with its old version.
func seedBranches(b testing.TB, db *DB, n int, branched bool) (thread, reply, old string) {
	msgs := make([]agentcore.Message, 0, n+n/benchBranch)
	parent := ""
	add := func(id string, role agentcore.Role, text string, active bool) {
		msgs = append(msgs, agentcore.Message{ID: id, ParentID: parent, Role: role, Content: agentcore.TextContent(text),
			Active: active})
	}
	for i := range n {
		role, text := agentcore.RoleUser, fmt.Sprintf("question %d with some words in it", i)
		if i%2 == 1 {
			role, text = agentcore.RoleAssistant, fmt.Sprintf("An answer %d of a few hundred bytes. %0300d", i, i)
		}
		id := NewID()
		if branched && i%2 == 1 && (i/2)%benchBranch == 1 {
			was := NewID()
			add(was, role, "the first version of "+text, false)
			if old == "" {
				reply, old = id, was
			}
		}
		add(id, role, text, true)
		parent = id
	}
	th, err := db.ImportThreads(context.Background(), []agentcore.ThreadImport{{Thread: agentcore.Thread{Title: "long"}, Messages: msgs}})
	if err != nil {
		b.Fatal(err)
	}
	return th[0].ID, reply, old
}

// openChat is what the server reads to open a chat of n messages: the last
// page of the active branch and the versions of its messages.
func openChat(b testing.TB, db *DB, threadID string, n int) {
	ctx := context.Background()
	page, err := db.ListMessages(ctx, threadID, agentcore.MessageQuery{Limit: benchPage, Last: true})
	if err != nil || len(page) != min(benchPage, n) {
		b.Fatalf("%d messages, %v", len(page), err)
	}
	if _, err := db.Siblings(ctx, threadID, msgIDs(page)...); err != nil {
		b.Fatal(err)
	}
}

// benchLen is the length of the thread's active branch.
func benchLen(b testing.TB, db *DB, threadID string) int {
	ms, err := db.ListMessages(context.Background(), threadID, agentcore.MessageQuery{})
	if err != nil {
		b.Fatal(err)
	}
	return len(ms)
}

// branchRound is one round of what issue 15's benchmark times: opening a
// linear chat and a branched one of the same length (their last page), and
// switching the version of a reply near the branched one's start, away
// and back, which changes the whole active branch below it twice.
type branchRound struct {
	openLinear, openBranched, away, back time.Duration
}

// branchBench holds the two chats a round reads and switches.
type branchBench struct {
	db                           *DB
	linear, branched, reply, old string
	n                            int
}

func newBranchBench(b testing.TB, n int) *branchBench {
	db := openTest(b)
	linear, _, _ := seedBranches(b, db, n, false)
	branched, reply, old := seedBranches(b, db, n, true)
	return &branchBench{db: db, linear: linear, branched: branched, reply: reply, old: old, n: n}
}

func (bb *branchBench) round(b testing.TB) branchRound {
	ctx := context.Background()
	var r branchRound
	t0 := time.Now()
	openChat(b, bb.db, bb.linear, bb.n)
	t1 := time.Now()
	openChat(b, bb.db, bb.branched, bb.n)
	t2 := time.Now()
	if err := bb.db.SwitchBranch(ctx, bb.branched, bb.old); err != nil {
		b.Fatal(err)
	}
	t3 := time.Now()
	if err := bb.db.SwitchBranch(ctx, bb.branched, bb.reply); err != nil {
		b.Fatal(err)
	}
	r.openLinear, r.openBranched, r.away, r.back = t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), time.Since(t3)
	return r
}

// BenchmarkBranches: issue 15 asks that opening a 10,000-message chat with
// 1,000 regenerated replies, and switching the version of a reply near its
// start, take within 2× of a linear chat of the same length; each op is
// one round (branchRound), and each part of it is reported on its own.
func BenchmarkBranches(b *testing.B) {
	bb := newBranchBench(b, benchChat)
	var sum branchRound
	for b.Loop() {
		r := bb.round(b)
		sum.openLinear += r.openLinear
		sum.openBranched += r.openBranched
		sum.away += r.away
		sum.back += r.back
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(per(sum.openLinear), "ns/open-linear")
	b.ReportMetric(per(sum.openBranched), "ns/open-branched")
	b.ReportMetric(per(sum.away), "ns/switch-away")
	b.ReportMetric(per(sum.back), "ns/switch-back")
	checkTree(b, bb.db, bb.branched)
}

// TestBenchBranchFigures checks the rounds of BenchmarkBranches on a short
// chat; with -bench-figures it prints, for the 10,000-message chats, the
// median of benchBranchRounds rounds of each part (make bench).
func TestBenchBranchFigures(t *testing.T) {
	n, rounds := 400, 3
	if *benchFigures {
		n, rounds = benchChat, benchBranchRounds
	}
	bb := newBranchBench(t, n)
	var open, openLinear, switches, away, back []float64
	msOf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for range rounds {
		r := bb.round(t)
		openLinear, open = append(openLinear, msOf(r.openLinear)), append(open, msOf(r.openBranched))
		away, back = append(away, msOf(r.away)), append(back, msOf(r.back))
		switches = append(switches, msOf(r.away), msOf(r.back))
	}
	checkTree(t, bb.db, bb.branched)
	if got := benchLen(t, bb.db, bb.branched); got != n {
		t.Fatalf("the branched chat shows %d messages after switching back, want %d", got, n)
	}
	if !*benchFigures {
		return
	}
	k := n / 1000
	fmt.Printf("BENCH branch_open_%dk_%d_branches_ms %.2f ms\n", k, n/2/benchBranch, quantile(open, 50))
	fmt.Printf("BENCH branch_open_%dk_linear_ms %.2f ms\n", k, quantile(openLinear, 50))
	fmt.Printf("BENCH branch_switch_near_start_ms %.2f ms\n", quantile(switches, 50))
	fmt.Printf("BENCH branch_switch_near_start_away_ms %.2f ms\n", quantile(away, 50))
	fmt.Printf("BENCH branch_switch_near_start_back_ms %.2f ms\n", quantile(back, 50))
	fmt.Printf("BENCH branch_switch_over_linear_open %.2f x\n", quantile(switches, 50)/quantile(openLinear, 50))
}

// benchBranchRounds: enough rounds for a median that one slow round (a
// checkpoint of the WAL, another process) does not move.
const benchBranchRounds = 15
