package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
)

// checkTree fails the test unless the thread's messages are a tree whose
// active messages are one path: every parent is an older message of the
// same thread, the active messages in seq order go from a root down, each
// the child of the one before, and ListMessages reads exactly them.
func checkTree(t testing.TB, db *DB, threadID string) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.reader.QueryContext(ctx, `SELECT m.id, coalesce(p.id, '?'), coalesce(p.thread_id, '?'), coalesce(p.seq, -1), m.seq
		FROM messages AS m LEFT JOIN messages AS p ON p.id = m.parent_id
		WHERE m.thread_id = ? AND m.parent_id IS NOT NULL AND (p.id IS NULL OR p.thread_id <> m.thread_id OR p.seq >= m.seq)`, threadID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, pid, pthread string
		var pseq, seq int64
		if err := rows.Scan(&id, &pid, &pthread, &pseq, &seq); err != nil {
			t.Fatal(err)
		}
		t.Errorf("message %s (seq %d) has a bad parent: %s of thread %s, seq %d", id, seq, pid, pthread, pseq)
	}
	rows.Close()
	tree, err := db.ListTree(ctx, threadID)
	if err != nil {
		t.Fatal(err)
	}
	var active []string
	children := map[string]int{} // active children per parent ("" for roots)
	for i, m := range tree {
		if i > 0 && tree[i-1].Seq >= m.Seq {
			t.Errorf("ListTree out of seq order at %s", m.ID)
		}
		if !m.Active {
			continue
		}
		if children[m.ParentID]++; children[m.ParentID] > 1 {
			t.Errorf("two active children of %q", m.ParentID)
		}
		want := ""
		if len(active) > 0 {
			want = active[len(active)-1]
		}
		if m.ParentID != want {
			t.Errorf("active message %s has parent %q, want %q: the active messages are no path", m.ID, m.ParentID, want)
		}
		active = append(active, m.ID)
	}
	shown, err := db.ListMessages(ctx, threadID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got := msgIDs(shown); !slices.Equal(got, active) {
		t.Errorf("ListMessages = %v, want the active path %v", got, active)
	}
	checkKept(t, db, threadID)
}

// checkKept fails the test unless the strands, the path's segments and the
// kept branches agree with the messages: every message's strand is known
// and the chain its strand gives it (the rest of its strand below it, then
// its parent strand up to the fork, and so on) is its chain of parents;
// the segments cover the seqs from 0 to the leaf without gap or overlap,
// each the strand forked from the one before at its lo; a kept branch is
// headed off the active path by a message of the thread, and its leaf is
// that message or below it.
func checkKept(t testing.TB, db *DB, threadID string) {
	t.Helper()
	ctx := context.Background()
	type msg struct {
		id, parent  string
		seq, strand int64
	}
	var all []msg
	rows, err := db.reader.QueryContext(ctx, `SELECT id, coalesce(parent_id, ''), seq, strand FROM messages
		WHERE thread_id = ? ORDER BY seq`, threadID)
	if err != nil {
		t.Fatal(err)
	}
	bySeq, byID := map[int64]msg{}, map[string]msg{}
	for rows.Next() {
		var m msg
		if err := rows.Scan(&m.id, &m.parent, &m.seq, &m.strand); err != nil {
			t.Fatal(err)
		}
		all, bySeq[m.seq], byID[m.id] = append(all, m), m, m
	}
	rows.Close()
	type fork struct {
		parent sql.NullInt64
		seq    int64
	}
	strands := map[int64]fork{}
	rows, err = db.reader.QueryContext(ctx, `SELECT strand, parent, fork_seq FROM strands WHERE thread_id = ?`, threadID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s int64
		var f fork
		if err := rows.Scan(&s, &f.parent, &f.seq); err != nil {
			t.Fatal(err)
		}
		strands[s] = f
	}
	rows.Close()
	// pred is the message before seq on the chain of strand s: the last of
	// s below seq, else the last of its parent strand up to the fork.
	pred := func(s, seq int64) string {
		for range len(strands) + 1 {
			for i := len(all) - 1; i >= 0; i-- {
				if all[i].strand == s && all[i].seq < seq {
					return all[i].id
				}
			}
			f, ok := strands[s]
			if !ok || !f.parent.Valid {
				return ""
			}
			s, seq = f.parent.Int64, f.seq+1
		}
		t.Fatalf("thread %s: the strands have a cycle", threadID)
		return ""
	}
	for _, m := range all {
		if _, ok := strands[m.strand]; !ok {
			t.Errorf("thread %s: message %s (seq %d) is on strand %d, which is unknown", threadID, m.id, m.seq, m.strand)
			continue
		}
		if got := pred(m.strand, m.seq); got != m.parent {
			t.Errorf("thread %s: message %s (seq %d, strand %d) follows %q on its strand, but its parent is %q",
				threadID, m.id, m.seq, m.strand, got, m.parent)
		}
	}
	rows, err = db.reader.QueryContext(ctx, `SELECT lo, hi, strand FROM path_segments WHERE thread_id = ? ORDER BY lo`, threadID)
	if err != nil {
		t.Fatal(err)
	}
	var hi int64
	up := sql.NullInt64{}
	for rows.Next() {
		var lo, s int64
		before := hi
		if err := rows.Scan(&lo, &hi, &s); err != nil {
			t.Fatal(err)
		}
		f := strands[s]
		if lo != before || hi < lo || f.seq != lo || f.parent != up {
			t.Errorf("thread %s: segment (%d, %d] of strand %d (forked from %v at %d) after one ending at %d, of strand %v",
				threadID, lo, hi, s, f.parent, f.seq, before, up)
		}
		up = sql.NullInt64{Int64: s, Valid: true}
	}
	rows.Close()
	rows, err = db.reader.QueryContext(ctx, `SELECT b.seq, b.pk, b.leaf_seq, coalesce(m.id, ''), `+onPath("m")+`
		FROM branch_leaf AS b LEFT JOIN messages AS m ON m.pk = b.pk AND m.thread_id = b.thread_id AND m.seq = b.seq
		WHERE b.thread_id = ?`, threadID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var seq, pk, leaf int64
		var head string
		var active bool
		if err := rows.Scan(&seq, &pk, &leaf, &head, &active); err != nil {
			t.Fatal(err)
		}
		below := false
		for m, ok := bySeq[leaf]; ok && !below; m, ok = byID[m.parent] {
			below = m.id == head
		}
		if head == "" || active || !below {
			t.Errorf("thread %s: kept branch at seq %d (pk %d, message %q, active %v) with leaf at %d, not below it",
				threadID, seq, pk, head, active, leaf)
		}
	}
	rows.Close()
}

func msgIDs(ms []agentcore.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// texts is the chat as shown: the texts of the active branch.
func texts(t testing.TB, db *DB, threadID string) string {
	t.Helper()
	ms, err := db.ListMessages(context.Background(), threadID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Content.Text())
	}
	return strings.Join(out, " ")
}

func say(threadID string, role agentcore.Role, text string) agentcore.Message {
	return agentcore.Message{ThreadID: threadID, Role: role, Content: agentcore.TextContent(text)}
}

// tick lets the clock move on: the branch chosen last is found by the
// millisecond it was chosen.
func tick() { time.Sleep(2 * time.Millisecond) }

// treeOps are the tree's writes, each checked by checkTree after it.
type treeOps struct {
	t  *testing.T
	db *DB
	th string
}

func (o treeOps) append(role agentcore.Role, text string) agentcore.Message {
	o.t.Helper()
	m := mustAppend(o.t, o.db, say(o.th, role, text))
	checkTree(o.t, o.db, o.th)
	tick()
	return m
}

func (o treeOps) rewind(id string) {
	o.t.Helper()
	if err := o.db.RewindTo(context.Background(), o.th, id); err != nil {
		o.t.Fatal(err)
	}
	checkTree(o.t, o.db, o.th)
	tick()
}

func (o treeOps) switchTo(id string) {
	o.t.Helper()
	if err := o.db.SwitchBranch(context.Background(), o.th, id); err != nil {
		o.t.Fatal(err)
	}
	checkTree(o.t, o.db, o.th)
	tick()
}

func (o treeOps) shows(want string) {
	o.t.Helper()
	if got := texts(o.t, o.db, o.th); got != want {
		o.t.Fatalf("the chat shows %q, want %q", got, want)
	}
}

// Edit and regenerate add siblings; switching shows a branch as it was
// last seen; the versions of each turn are counted.
func TestTreeEditRegenerateSwitch(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	u1 := o.append(agentcore.RoleUser, "u1")
	r1 := o.append(agentcore.RoleAssistant, "r1")
	u2 := o.append(agentcore.RoleUser, "u2")
	r2 := o.append(agentcore.RoleAssistant, "r2")
	if u1.ParentID != "" || r1.ParentID != u1.ID || r2.ParentID != u2.ID || !r2.Active {
		t.Fatalf("appended as %+v, %+v, %+v", u1, r1, r2)
	}
	o.shows("u1 r1 u2 r2")

	// Regenerate r2: a sibling.
	o.rewind(u2.ID)
	o.shows("u1 r1 u2")
	r2b := o.append(agentcore.RoleAssistant, "r2b")
	o.shows("u1 r1 u2 r2b")
	// Edit u1: a new root.
	o.rewind("")
	o.shows("")
	u1b := o.append(agentcore.RoleUser, "u1b")
	o.append(agentcore.RoleAssistant, "r1b")
	o.shows("u1b r1b")

	// Back to the first version of u1: its branch as last seen, with r2b.
	o.switchTo(u1.ID)
	o.shows("u1 r1 u2 r2b")
	o.switchTo(r2.ID)
	o.shows("u1 r1 u2 r2")
	o.switchTo(u1b.ID)
	o.shows("u1b r1b")
	o.switchTo(u1.ID)
	o.shows("u1 r1 u2 r2")
	o.switchTo(r1.ID) // already shown: nothing changes
	o.shows("u1 r1 u2 r2")

	// Edit u2 with an explicit parent, from another branch.
	o.switchTo(u1b.ID)
	u2c := mustAppend(t, db, agentcore.Message{ThreadID: o.th, Role: agentcore.RoleUser,
		Content: agentcore.TextContent("u2c"), ParentID: r1.ID})
	checkTree(t, db, o.th)
	o.shows("u1 r1 u2c")

	sibs, err := db.Siblings(ctx, o.th, u1.ID, r1.ID, u2.ID, r2.ID, u2c.ID, r2b.ID, u1b.ID, "nonesuch")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]agentcore.Siblings{
		u1.ID:  {IDs: []string{u1.ID, u1b.ID}, Index: 0},
		u1b.ID: {IDs: []string{u1.ID, u1b.ID}, Index: 1},
		u2.ID:  {IDs: []string{u2.ID, u2c.ID}, Index: 0},
		u2c.ID: {IDs: []string{u2.ID, u2c.ID}, Index: 1},
		r2.ID:  {IDs: []string{r2.ID, r2b.ID}, Index: 0},
		r2b.ID: {IDs: []string{r2.ID, r2b.ID}, Index: 1},
	}
	if !reflect.DeepEqual(sibs, want) {
		t.Errorf("Siblings = %v, want %v", sibs, want)
	}
	if sibs, err := db.Siblings(ctx, "other", u1.ID); err != nil || len(sibs) != 0 {
		t.Errorf("siblings asked in another thread: %v, %v", sibs, err)
	}
	tree, err := db.ListTree(ctx, o.th)
	if err != nil || len(tree) != 8 {
		t.Fatalf("ListTree: %d messages, %v", len(tree), err)
	}
}

// Queued messages moved to the end (a signal filed after the reply written
// so far) stay on the path, with or without a reply split around them.
func TestTreeMoveQueued(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for _, split := range []bool{false, true} {
		o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
		o.append(agentcore.RoleUser, "u1")
		r1 := mustAppend(t, db, agentcore.Message{ThreadID: o.th, Role: agentcore.RoleAssistant,
			Content: agentcore.TextContent("r1"), Status: agentcore.StatusStreaming})
		q1 := mustAppend(t, db, agentcore.Message{ThreadID: o.th, Role: agentcore.RoleUser,
			Content: agentcore.TextContent("q1"), Status: agentcore.StatusQueued})
		q2 := mustAppend(t, db, agentcore.Message{ThreadID: o.th, Role: agentcore.RoleSignal, Type: "user",
			Content: agentcore.TextContent("q2"), Status: agentcore.StatusQueued})
		checkTree(t, db, o.th)
		if !split {
			// Nothing written yet: the reply follows the signals.
			if err := db.MoveMessages(ctx, o.th, q1.ID, q2.ID, r1.ID); err != nil {
				t.Fatal(err)
			}
			checkTree(t, db, o.th)
			o.shows("u1 q1 q2 r1")
			continue
		}
		if err := db.MoveMessages(ctx, o.th, q1.ID, q2.ID); err != nil {
			t.Fatal(err)
		}
		checkTree(t, db, o.th)
		o.append(agentcore.RoleAssistant, "r2")
		o.shows("u1 r1 q1 q2 r2")
		// A queued message taken back: what followed it follows its parent.
		if err := db.DeleteMessage(ctx, q1.ID); err != nil {
			t.Fatal(err)
		}
		checkTree(t, db, o.th)
		o.shows("u1 r1 q2 r2")
	}
}

// Deleting a message keeps the tree and the active path whole, even a root
// with versions below it.
func TestTreeDeleteMessage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	u1 := o.append(agentcore.RoleUser, "u1")
	o.append(agentcore.RoleAssistant, "r1")
	o.rewind(u1.ID)
	r1b := o.append(agentcore.RoleAssistant, "r1b")
	o.append(agentcore.RoleUser, "u2")
	if err := db.DeleteMessage(ctx, u1.ID); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	o.shows("r1b u2")
	o.switchTo(o.mustFind("r1"))
	o.shows("r1")
	if err := db.DeleteMessage(ctx, r1b.ID); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	o.shows("r1")
	o.switchTo(o.mustFind("u2"))
	o.shows("u2")
	if err := db.DeleteMessage(ctx, "nonesuch"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("deleting an unknown message: %v", err)
	}
	checkTree(t, db, o.th)
}

func (o treeOps) mustFind(text string) string {
	o.t.Helper()
	tree, err := o.db.ListTree(context.Background(), o.th)
	if err != nil {
		o.t.Fatal(err)
	}
	for _, m := range tree {
		if m.Content.Text() == text {
			return m.ID
		}
	}
	o.t.Fatalf("no message %q", text)
	return ""
}

// A thread in the trash refuses branch writes and comes back with its tree.
func TestTreeTrashRestore(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	u1 := o.append(agentcore.RoleUser, "u1")
	r1 := o.append(agentcore.RoleAssistant, "r1")
	o.rewind(u1.ID)
	o.append(agentcore.RoleAssistant, "r1b")
	if err := db.TrashThread(ctx, o.th, time.Now()); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	for name, err := range map[string]error{
		"switch":              db.SwitchBranch(ctx, o.th, r1.ID),
		"rewind":              db.RewindTo(ctx, o.th, u1.ID),
		"rewind to the start": db.RewindTo(ctx, o.th, ""),
		"fork": func() error {
			_, err := db.ForkThread(ctx, o.th, r1.ID, agentcore.Thread{})
			return err
		}(),
	} {
		if !errors.Is(err, agentcore.ErrNotFound) {
			t.Errorf("%s in a trashed thread: %v, want not found", name, err)
		}
	}
	if err := db.RestoreThread(ctx, o.th); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	o.shows("u1 r1b")
	o.switchTo(r1.ID)
	o.shows("u1 r1")
}

// A fork copies the branch down to a message into a new thread that says
// where it came from.
func TestForkThread(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{ResourceID: "someone"}).ID}
	u1 := o.append(agentcore.RoleUser, "u1")
	r1 := o.append(agentcore.RoleAssistant, "r1")
	o.append(agentcore.RoleUser, "u2")
	o.rewind(u1.ID)
	r1b := mustAppend(t, db, agentcore.Message{ThreadID: o.th, Role: agentcore.RoleAssistant,
		Content: agentcore.TextContent("r1b"), Status: agentcore.StatusStreaming, RunID: "run-1"})
	checkTree(t, db, o.th)

	for _, tc := range []struct {
		at, want string
		status   agentcore.MessageStatus
	}{
		{r1b.ID, "u1 r1b", agentcore.StatusInterrupted}, // its run is the source thread's
		{r1.ID, "u1 r1", agentcore.StatusComplete},      // an inactive branch
	} {
		f, err := db.ForkThread(ctx, o.th, tc.at, agentcore.Thread{Title: "fork", Metadata: map[string]any{"k": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		checkTree(t, db, f.ID)
		got, err := db.GetThread(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		from := map[string]any{"threadId": o.th, "messageId": tc.at}
		if got.Title != "fork" || got.ResourceID != "someone" || got.Metadata["k"] != "v" ||
			!reflect.DeepEqual(got.Metadata[agentcore.MetaForkedFrom], from) {
			t.Errorf("fork at %s is %+v", tc.at, got)
		}
		if s := texts(t, db, f.ID); s != tc.want {
			t.Errorf("fork at %s shows %q, want %q", tc.at, s, tc.want)
		}
		copied, _ := db.ListTree(ctx, f.ID)
		src, _ := db.GetMessage(ctx, tc.at)
		last := copied[len(copied)-1]
		if last.ID == src.ID || last.Status != tc.status || !last.CreatedAt.Equal(src.CreatedAt) ||
			last.Role != src.Role || last.ThreadID != f.ID || last.ResourceID != "someone" {
			t.Errorf("copy %+v of %+v", last, src)
		}
	}
	checkTree(t, db, o.th)
	o.shows("u1 r1b")

	if _, err := db.ForkThread(ctx, o.th, "nonesuch", agentcore.Thread{}); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("fork at an unknown message: %v", err)
	}
	other := mustThread(t, db, agentcore.Thread{})
	if _, err := db.ForkThread(ctx, other.ID, r1.ID, agentcore.Thread{}); !errors.Is(err, agentcore.ErrNotFound) ||
		!strings.Contains(err.Error(), r1.ID) {
		t.Errorf("fork at a message of another thread: %v", err)
	}
}

// Ids from outside (another thread's, unknown, SQL in them, an unknown
// thread) are refused with an error that names them, and change nothing.
func TestTreeHostileValues(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	u1 := o.append(agentcore.RoleUser, "u1")
	o.append(agentcore.RoleAssistant, "r1")
	other := mustThread(t, db, agentcore.Thread{})
	elsewhere := mustAppend(t, db, say(other.ID, agentcore.RoleUser, "elsewhere"))
	evil := `x'); DROP TABLE messages; --"`

	before, _ := db.ListTree(ctx, o.th)
	for _, tc := range []struct {
		name, thread, id string
	}{
		{"a message of another thread", o.th, elsewhere.ID},
		{"an unknown message", o.th, "nonesuch"},
		{"SQL in the id", o.th, evil},
		{"an unknown thread", "no-thread", u1.ID},
		{"SQL in the thread", evil, u1.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for op, err := range map[string]error{
				"switch": db.SwitchBranch(ctx, tc.thread, tc.id),
				"rewind": db.RewindTo(ctx, tc.thread, tc.id),
				"append": func() error {
					_, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: tc.thread, Role: agentcore.RoleUser, ParentID: tc.id})
					return err
				}(),
				"move": db.MoveMessages(ctx, tc.thread, tc.id),
				"fork": func() error {
					_, err := db.ForkThread(ctx, tc.thread, tc.id, agentcore.Thread{})
					return err
				}(),
			} {
				if !errors.Is(err, agentcore.ErrNotFound) || !strings.Contains(err.Error(), tc.id) {
					t.Errorf("%s: %v, want not found naming %s", op, err, tc.id)
				}
			}
		})
		checkTree(t, db, o.th)
		checkTree(t, db, other.ID)
	}
	if err := db.RewindTo(ctx, "no-thread", ""); !errors.Is(err, agentcore.ErrNotFound) {
		t.Errorf("rewinding an unknown thread: %v", err)
	}
	if after, _ := db.ListTree(ctx, o.th); !reflect.DeepEqual(after, before) {
		t.Errorf("refused writes changed the tree:\n%+v\n%+v", after, before)
	}
	if s := texts(t, db, other.ID); s != "elsewhere" {
		t.Errorf("the other thread shows %q", s)
	}
	threads, _ := db.ListThreads(ctx, agentcore.ThreadQuery{})
	if len(threads) != 2 {
		t.Errorf("%d threads after refused forks, want 2", len(threads))
	}
}

// Two tabs (here many goroutines) appending, rewinding, switching and
// moving at once cannot break the tree: every operation is one write
// transaction.
func TestTreeConcurrent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	seed := mustAppend(t, db, say(th.ID, agentcore.RoleUser, "seed"))
	var mu sync.Mutex
	known := []string{seed.ID}
	var wg sync.WaitGroup
	const workers, ops = 8, 40
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 15))
			for i := range ops {
				mu.Lock()
				pick := known[rng.IntN(len(known))]
				mu.Unlock()
				var err error
				switch rng.IntN(5) {
				case 0:
					err = db.SwitchBranch(ctx, th.ID, pick)
				case 1:
					err = db.RewindTo(ctx, th.ID, pick)
				case 4:
					err = db.MoveMessages(ctx, th.ID, pick)
				case 2:
					_, err = db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleUser,
						Content: agentcore.TextContent(fmt.Sprint(w, i)), ParentID: pick})
				default:
					var m agentcore.Message
					if m, err = db.AppendMessage(ctx, say(th.ID, agentcore.RoleAssistant, fmt.Sprint(w, i))); err == nil {
						mu.Lock()
						known = append(known, m.ID)
						mu.Unlock()
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkTree(t, db, th.ID)
}

// EXPLAIN QUERY PLAN of the reads that open a chat and of the tree's
// writes: a page, the context fill and the active leaf read path_segments
// by its key and each range by messages_strand, in order, without sorting;
// the versions use messages_children; a switch reads and writes
// path_segments, strands and branch_leaf by their keys. None scans a table.
func TestTreeQueryPlans(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	const ranges = "SEARCH messages USING INDEX messages_strand (thread_id=? AND strand=? AND seq>? AND seq<?)"
	for _, tc := range []struct {
		name, query string
		want        []string
		args        []any
		sorts       bool // a temporary b-tree for ORDER BY is expected (the last page's 50 rows put back in order)
	}{
		{"page", `SELECT ` + activeCols + ` FROM ` + pathRows + `
			WHERE g.thread_id = ?1 AND g.lo >= coalesce((SELECT max(lo) FROM path_segments WHERE thread_id = ?1 AND lo <= ?2), 0)
				AND g.lo < ?3 AND messages.seq > ?2 AND messages.seq < ?3
			ORDER BY g.lo, messages.seq LIMIT ?4`,
			[]string{"SEARCH g USING PRIMARY KEY (thread_id=? AND lo>? AND lo<?)", ranges}, []any{"t", 0, 100, 50}, false},
		{"last page", `SELECT ` + activeCols + ` FROM ` + pathRows + `
			WHERE g.thread_id = ?1 AND g.lo >= coalesce((SELECT max(lo) FROM path_segments WHERE thread_id = ?1 AND lo <= ?2), 0)
				AND g.lo < ?3 AND messages.seq > ?2 AND messages.seq < ?3
			ORDER BY g.lo DESC, messages.seq DESC LIMIT ?4`,
			[]string{"SEARCH g USING PRIMARY KEY (thread_id=? AND lo>? AND lo<?)", ranges}, []any{"t", 0, 100, 50}, false},
		{"message", `SELECT ` + messageCols + ` FROM messages WHERE id = ?`,
			[]string{"SEARCH messages USING INDEX", "SEARCH g USING PRIMARY KEY (thread_id=? AND lo<?)"}, []any{"m"}, false},
		{"active leaf", `SELECT messages.pk, messages.seq, messages.strand, messages.id FROM ` + pathRows + `
			WHERE g.thread_id = ? ORDER BY g.lo DESC, messages.seq DESC LIMIT 1`,
			[]string{"SEARCH g USING PRIMARY KEY (thread_id=?)", "INDEX messages_strand"}, []any{"t"}, false},
		{"siblings", `SELECT m.id, s.id FROM messages AS m
			JOIN messages AS s ON s.thread_id = m.thread_id AND s.parent_id IS m.parent_id
			WHERE m.id IN (SELECT value FROM json_each(?)) AND m.thread_id = ? ORDER BY m.id, s.seq`,
			[]string{"messages_children"}, []any{`["a"]`, "t"}, true},
		{"context fill", `SELECT messages.context_tokens, messages.usage_model FROM ` + pathRows + `
			WHERE g.thread_id = ? ORDER BY g.lo DESC, messages.seq DESC LIMIT 50`,
			[]string{"SEARCH g USING PRIMARY KEY (thread_id=?)", "INDEX messages_strand"}, []any{"t"}, false},
		{"strand's last", `SELECT NOT EXISTS (SELECT 1 FROM messages WHERE thread_id = ? AND strand = ? AND seq > ?)`,
			[]string{"SEARCH messages USING COVERING INDEX messages_strand (thread_id=? AND strand=? AND seq>?)"}, []any{"t", 1, 3}, false},
		{"leave", `SELECT messages.pk, messages.seq FROM ` + pathRows + `
			WHERE g.thread_id = ?1 AND g.lo >= coalesce((SELECT max(lo) FROM path_segments WHERE thread_id = ?1 AND lo <= ?2), 0)
				AND messages.seq > ?2
			ORDER BY g.lo, messages.seq LIMIT 1`,
			[]string{"SEARCH g USING PRIMARY KEY (thread_id=? AND lo>?)", "INDEX messages_strand"}, []any{"t", 3}, false},
		{"cut", `DELETE FROM path_segments WHERE thread_id = ? AND lo >= ?`,
			[]string{"SEARCH path_segments USING PRIMARY KEY (thread_id=? AND lo>?)"}, []any{"t", 3}, false},
		{"forget", `DELETE FROM branch_leaf WHERE thread_id = ?1 AND seq > ?2
			AND (SELECT ` + onPath("m") + ` FROM messages AS m WHERE m.pk = branch_leaf.pk)`,
			[]string{"SEARCH branch_leaf USING PRIMARY KEY (thread_id=? AND seq>?)", "SEARCH m USING INTEGER PRIMARY KEY",
				"SEARCH g USING PRIMARY KEY (thread_id=? AND lo<?)"}, []any{"t", 3}, false},
		{"kept leaf", `SELECT m.pk, m.seq, m.strand FROM branch_leaf AS b
			JOIN messages AS m ON m.thread_id = b.thread_id AND m.seq = b.leaf_seq
			WHERE b.thread_id = ? AND b.seq = ? AND b.pk = ?`,
			[]string{"SEARCH b USING PRIMARY KEY (thread_id=? AND seq=?)", "SEARCH m USING INDEX"}, []any{"t", 3, 4}, false},
		{"extend", `WITH RECURSIVE up (strand, parent, lo, hi) AS (
				SELECT strand, parent, fork_seq, ?3 FROM strands WHERE thread_id = ?1 AND strand = ?2
				UNION ALL
				SELECT s.strand, s.parent, s.fork_seq, up.lo FROM up JOIN strands AS s ON s.thread_id = ?1 AND s.strand = up.parent
				WHERE up.lo >= ?4
			)
			SELECT lo, hi, strand FROM up`,
			[]string{"SEARCH strands USING PRIMARY KEY (thread_id=? AND strand=?)", "SEARCH s USING PRIMARY KEY (thread_id=? AND strand=?)"},
			[]any{"t", 2, 9, 3}, false},
		{"walk up", `SELECT ` + onPath("m") + ` FROM messages AS m WHERE m.id = ?1`,
			[]string{"SEARCH g USING PRIMARY KEY (thread_id=? AND lo<?)"}, []any{"m"}, false},
	} {
		rows, err := db.reader.QueryContext(ctx, `EXPLAIN QUERY PLAN `+tc.query, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: plan %q, want %q", tc.name, all, w)
			}
		}
		if strings.Contains(all, "TEMP B-TREE") && !tc.sorts {
			t.Errorf("%s: plan %q sorts", tc.name, all)
		}
		for _, table := range []string{"m", "s", "g", "b", "messages", "path_segments", "strands", "branch_leaf"} {
			if strings.Contains(all+";", "SCAN "+table+";") || strings.Contains(all, "SCAN "+table+" ") {
				t.Errorf("%s: plan %q scans %s", tc.name, all, table)
			}
		}
	}
}

// Usage counts every reply ever generated (each was paid for); the context
// fill is the active branch's. Search finds text in every branch, with the
// message's id to open its branch.
func TestTreeUsageAndSearch(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	u1 := o.append(agentcore.RoleUser, "question")
	first := reply(o.th, "m", &agentcore.Usage{InputTokens: 10, OutputTokens: 1}, 100)
	first.Content = agentcore.TextContent("platypus")
	first.Content.Metadata = map[string]any{"model": "m", agentcore.MetaUsage: agentcore.Usage{InputTokens: 10, OutputTokens: 1},
		agentcore.MetaContextTokens: 100}
	r1 := mustAppend(t, db, first)
	o.rewind(u1.ID)
	mustAppend(t, db, reply(o.th, "m", &agentcore.Usage{InputTokens: 20, OutputTokens: 2}, 200))
	checkTree(t, db, o.th)
	u, err := db.ThreadUsage(ctx, o.th)
	if err != nil {
		t.Fatal(err)
	}
	if u.Replies != 2 || u.ByModel["m"].InputTokens != 30 || u.ContextTokens != 200 {
		t.Errorf("usage %+v, want both replies summed and the active one's context", u)
	}
	o.switchTo(r1.ID)
	if u, _ := db.ThreadUsage(ctx, o.th); u.ContextTokens != 100 {
		t.Errorf("context after switching: %d, want 100", u.ContextTokens)
	}
	o.rewind(u1.ID)
	hits := mustSearch(t, db, "platypus")
	if len(hits) != 1 || hits[0].MessageID != r1.ID {
		t.Errorf("search in an inactive branch: %+v", hits)
	}
}

// Import numbers messages as one branch.
func TestTreeImport(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	got, err := db.ImportThreads(ctx, []agentcore.ThreadImport{importSample("", "a", "b", "c")})
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, got[0].ID)
	if s := texts(t, db, got[0].ID); s != "a b c" {
		t.Errorf("imported chat shows %q", s)
	}
}

// A database made by the code before the tree (migrations up to 0011, rows
// as AppendMessage and MoveMessages wrote them then) opens with every chat
// one active branch, in the same order, with nothing lost: interrupted and
// retried replies, a run suspended on a question, queued messages and
// signals, and seqs with gaps left by moves.
func TestTreeMigration(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := databaseAsOf(t, 11)
	exec(`INSERT INTO resources (id, created_at, updated_at) VALUES ('r', 0, 0)`)
	for _, th := range []string{"chat", "signals", "empty", "trashed"} {
		exec(`INSERT INTO threads (id, resource_id, title, created_at, updated_at) VALUES (?, 'r', ?, 0, 0)`, th, th)
	}
	exec(`UPDATE threads SET deleted_at = 1 WHERE id = 'trashed'`) // purged at Open, with its messages
	exec(`INSERT INTO runs (id, thread_id, agent_id, model, status, started_at) VALUES
		('run-ok', 'chat', 'a', 'm', 'done', 0), ('run-failed', 'chat', 'a', 'm', 'failed', 0),
		('run-retry', 'chat', 'a', 'm', 'done', 0), ('run-stopped', 'chat', 'a', 'm', 'stopped', 0),
		('run-asks', 'chat', 'a', 'm', 'suspended', 0), ('run-sig', 'signals', 'a', 'm', 'done', 0)`)
	text := func(s string, meta map[string]any) string {
		c := agentcore.TextContent(s)
		c.Metadata = meta
		b, err := encodeContent(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	asks, err := encodeContent(agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "tool-invocation",
		ToolInvocation: &agentcore.ToolInvocation{State: "suspended", ToolCallID: "call-1", ToolName: "ask_user",
			SuspendPayload: []byte(`{"question":"Which port?"}`)}}}})
	if err != nil {
		t.Fatal(err)
	}
	usage := map[string]any{"model": "m", agentcore.MetaUsage: map[string]any{"inputTokens": 5, "outputTokens": 1}}
	type row struct {
		id, thread, role, typ, content, run string
		status                              agentcore.MessageStatus
	}
	rows := []row{
		{"u1", "chat", "user", "", text("hello", nil), "", agentcore.StatusComplete},
		{"a1", "chat", "assistant", "", text("hi there", usage), "run-ok", agentcore.StatusComplete},
		{"u2", "chat", "user", "", text("and now?", nil), "", agentcore.StatusComplete},
		{"a2", "chat", "assistant", "", text("partial", map[string]any{"error": "boom", "retried": true}), "run-failed", agentcore.StatusError},
		{"a3", "chat", "assistant", "", text("the retry", usage), "run-retry", agentcore.StatusComplete},
		{"u3", "chat", "user", "", text("go on", nil), "", agentcore.StatusComplete},
		{"a4", "chat", "assistant", "", text("cut o", map[string]any{"stopped": "user"}), "run-stopped", agentcore.StatusInterrupted},
		{"u4", "chat", "user", "", text("ask me", nil), "", agentcore.StatusComplete},
		{"a5", "chat", "assistant", "", string(asks), "run-asks", agentcore.StatusComplete},
		{"q1", "chat", "user", "", text("queued while it asked", nil), "", agentcore.StatusQueued},
		{"s1", "signals", "user", "", text("start", nil), "", agentcore.StatusComplete},
		{"s2", "signals", "assistant", "", text("before the signal", nil), "run-sig", agentcore.StatusComplete},
		{"s3", "signals", "signal", "user", text("a signal", nil), "", agentcore.StatusComplete},
		{"s4", "signals", "assistant", "", text("after the signal", nil), "run-sig", agentcore.StatusComplete},
		{"x1", "trashed", "user", "", text("gone", nil), "", agentcore.StatusComplete},
	}
	for i, r := range rows {
		// As AppendMessage wrote a message before 0012.
		exec(`INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, run_id, created_at, type)
			SELECT ?, ?, 'r', coalesce((SELECT max(seq) FROM messages WHERE thread_id = ?), 0) + 1, ?, ?, ?, ?, ?, ?`,
			r.id, r.thread, r.thread, r.role, r.content, r.status, r.run, 1000+i, r.typ)
	}
	// As MoveMessages moved a delivered signal after the reply so far,
	// leaving a gap in seq: s2 is now after s3, s4 after both.
	for _, id := range []string{"s2", "s4"} {
		exec(`UPDATE messages SET seq = (SELECT max(seq) FROM messages WHERE thread_id = 'signals') + 1 WHERE id = ?`, id)
	}
	type stored struct {
		ID, Content, Status, Role, Type, Run string
		Seq, Created                         int64
	}
	read := func(d *sql.DB, thread string) []stored {
		t.Helper()
		rs, err := d.QueryContext(ctx, `SELECT id, content, status, role, type, run_id, seq, created_at FROM messages
			WHERE thread_id = ? ORDER BY seq`, thread)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []stored
		for rs.Next() {
			var s stored
			if err := rs.Scan(&s.ID, &s.Content, &s.Status, &s.Role, &s.Type, &s.Run, &s.Seq, &s.Created); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	before := map[string][]stored{}
	for _, th := range []string{"chat", "signals", "empty"} {
		before[th] = read(raw, th)
	}
	raw.Close()

	db := openAt(t, path)
	for th, want := range before {
		// Open keeps a message left queued as sent (recoverInterrupted).
		for i := range want {
			if want[i].Status == string(agentcore.StatusQueued) {
				want[i].Status = string(agentcore.StatusComplete)
			}
		}
		if got := read(db.reader, th); !reflect.DeepEqual(got, want) {
			t.Errorf("thread %s after the migration:\n%+v\nwant\n%+v", th, got, want)
		}
		checkTree(t, db, th)
		var ids []string
		for _, m := range want {
			ids = append(ids, m.ID)
		}
		shown, err := db.ListMessages(ctx, th, agentcore.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if got := msgIDs(shown); !slices.Equal(got, append([]string{}, ids...)) {
			t.Errorf("thread %s shows %v, want %v", th, got, ids)
		}
		var bad int
		if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE thread_id = ? AND chosen_at <> created_at`,
			th).Scan(&bad); err != nil || bad != 0 {
			t.Errorf("thread %s: %d messages chosen at another time than made (%v)", th, bad, err)
		}
		if sibs, err := db.Siblings(ctx, th, ids...); err != nil || len(sibs) != 0 {
			t.Errorf("thread %s has versions after the migration: %v, %v", th, sibs, err)
		}
	}
	if got := msgIDs(mustList(t, db, "signals")); !slices.Equal(got, []string{"s1", "s3", "s2", "s4"}) {
		t.Errorf("the moved signal's thread reads %v", got)
	}
	if u, err := db.ThreadUsage(ctx, "chat"); err != nil || u.Replies != 2 || u.ByModel["m"].InputTokens != 10 {
		t.Errorf("usage after the migration: %+v, %v", u, err)
	}
	// The migrated chat grows and branches as a new one.
	o := treeOps{t, db, "chat"}
	next := o.append(agentcore.RoleAssistant, "answered")
	if next.ParentID != "q1" {
		t.Errorf("the first message after the migration follows %q, want q1", next.ParentID)
	}
	o.rewind("u2")
	o.append(agentcore.RoleAssistant, "regenerated")
	o.shows("hello hi there and now? regenerated")
	o.switchTo("a3")
	if got := texts(t, db, "chat"); !strings.HasSuffix(got, "queued while it asked answered") {
		t.Errorf("back on the old branch: %q", got)
	}
}

func mustList(t testing.TB, db *DB, threadID string) []agentcore.Message {
	t.Helper()
	ms, err := db.ListMessages(context.Background(), threadID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// databaseAsOf makes a database file with the migrations up to version
// applied, as a Parley of that time left it, and returns its path, the
// open handle and a statement runner that fails the test.
func databaseAsOf(t *testing.T, version int) (string, *sql.DB, func(q string, args ...any)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`)
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.version > version {
			break
		}
		exec(m.sql)
		exec(`INSERT INTO schema_migrations VALUES (?, 0)`, m.version)
	}
	return path, raw, exec
}
