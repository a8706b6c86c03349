package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"parley/agentcore"
)

// kept is how many branches of the thread are kept (branch_leaf).
func kept(t testing.TB, db *DB, threadID string) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRowContext(context.Background(), `SELECT count(*) FROM branch_leaf WHERE thread_id = ?`,
		threadID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A branch left is kept as it was and comes back whole, from its first
// message or from any message of it; below a leaf that a rewind left with
// children it goes on to the child active last; a message deleted or moved
// out of a kept branch leaves the rest of it.
func TestTreeKeptBranch(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	u1 := o.append(agentcore.RoleUser, "u1")
	r1 := o.append(agentcore.RoleAssistant, "r1")
	u2 := o.append(agentcore.RoleUser, "u2")
	r2 := o.append(agentcore.RoleAssistant, "r2")
	u3 := o.append(agentcore.RoleUser, "u3")
	o.append(agentcore.RoleAssistant, "r3")

	o.rewind(u1.ID)
	if n := kept(t, db, o.th); n != 1 {
		t.Fatalf("%d branches kept after the rewind, want r1's", n)
	}
	r1b := o.append(agentcore.RoleAssistant, "r1b")
	o.switchTo(r1.ID)
	o.shows("u1 r1 u2 r2 u3 r3")
	if n := kept(t, db, o.th); n != 0 {
		t.Errorf("%d branches kept while r1's is shown, want none (r1b is a branch of one)", n)
	}
	o.switchTo(r1b.ID)
	o.switchTo(u3.ID) // a message in the middle of the kept branch
	o.shows("u1 r1 u2 r2 u3 r3")

	// Rewound to u2, then left above it: back on r1 the branch goes on
	// below u2 to r2, the child active last, and down to its leaf.
	o.rewind(u2.ID)
	o.switchTo(r1b.ID)
	o.switchTo(r1.ID)
	o.shows("u1 r1 u2 r2 u3 r3")

	// Out of a kept branch: a deleted message, a moved one.
	o.switchTo(r1b.ID)
	if err := db.DeleteMessage(ctx, u2.ID); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	o.switchTo(r1.ID)
	o.shows("u1 r1 r2 u3 r3")
	o.switchTo(r1b.ID)
	if err := db.MoveMessages(ctx, o.th, u3.ID); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	o.shows("u1 r1b u3")
	o.switchTo(r2.ID)
	o.shows("u1 r1 r2 r3")
	// The head of a kept branch moved: nothing is kept, the descent finds it.
	o.switchTo(r1b.ID)
	if err := db.MoveMessages(ctx, o.th, r1.ID); err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, o.th)
	if n := kept(t, db, o.th); n != 0 {
		t.Errorf("%d branches kept after the head of the only one moved", n)
	}
	o.switchTo(r2.ID)
	o.shows("u1 r2 r3")

	// A deleted chat takes its rows of the narrow tables with it.
	o.switchTo(r1b.ID)
	if err := db.DeleteThread(ctx, o.th); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.reader.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM path_segments) + (SELECT count(*) FROM strands)
		+ (SELECT count(*) FROM branch_leaf)`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d rows of the tree's tables after the chat was deleted (%v)", left, err)
	}
}

// Random appends, rewinds and switches against a model of the contract:
// after each, the active branch is the model's, where switching to a
// message follows, below it, the child that was on the active branch last
// at each level, down to a leaf.
func TestTreeLastChosenModel(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{}).ID
	parent := map[string]string{}
	var all, path []string
	last := map[string]string{} // parent ("" for roots) -> child last on the path
	remember := func() {
		up := ""
		for _, id := range path {
			last[up], up = id, id
		}
	}
	to := func(id string) []string {
		var p []string
		for ; id != ""; id = parent[id] {
			p = append(p, id)
		}
		slices.Reverse(p)
		return p
	}
	rng := rand.New(rand.NewPCG(15, 14))
	for i := range 150 {
		var err error
		switch op := rng.IntN(10); {
		case op < 4 || len(all) == 0:
			var m agentcore.Message
			m, err = db.AppendMessage(ctx, say(th, agentcore.RoleUser, "m"))
			if err == nil {
				parent[m.ID] = ""
				if len(path) > 0 {
					parent[m.ID] = path[len(path)-1]
				}
				all, path = append(all, m.ID), append(path, m.ID)
			}
		case op < 6:
			id := all[rng.IntN(len(all))]
			if rng.IntN(8) == 0 {
				id = ""
			}
			err = db.RewindTo(ctx, th, id)
			path = to(id)
		default:
			id := all[rng.IntN(len(all))]
			err = db.SwitchBranch(ctx, th, id)
			if !slices.Contains(path, id) {
				path = to(id)
				for c := last[id]; c != ""; c = last[c] {
					path = append(path, c)
				}
			}
		}
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		remember()
		checkTree(t, db, th)
		if got := msgIDs(mustList(t, db, th)); !slices.Equal(got, append([]string{}, path...)) {
			t.Fatalf("op %d: the active branch is %v, want %v", i, got, path)
		}
		tick() // chosen_at, which the walk down reads, is in milliseconds
	}
}

// A database as the tree was stored before 0014 (the active flag and
// chosen_at on the message rows, migrations up to 0013) opens with the same
// active branch in each chat, the flag gone, and switching to any message
// shows the branch the old descent by chosen_at showed: the leaves stay.
func TestTreeMigrationActivePath(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := databaseAsOf(t, 13)
	exec(`INSERT INTO resources (id, created_at, updated_at) VALUES ('r', 0, 0)`)
	for _, th := range []string{"tree", "rewound", "line"} {
		exec(`INSERT INTO threads (id, resource_id, title, created_at, updated_at) VALUES (?, 'r', ?, 0, 0)`, th, th)
	}
	type row struct {
		id, thread, parent string
		active             bool
		chosen             int64
	}
	// As SwitchBranch, RewindTo and AppendMessage of 0012 left them: r1's
	// branch was left for r1b, below r2 u4b was chosen after u4, and r2b
	// regenerates r2c.
	rows := []row{
		{"u1", "tree", "", true, 10},
		{"r1", "tree", "u1", false, 11},
		{"u2", "tree", "r1", false, 12},
		{"r2", "tree", "u2", false, 13},
		{"u4", "tree", "r2", false, 14},
		{"r4", "tree", "u4", false, 15},
		{"u4b", "tree", "r2", false, 16},
		{"r1b", "tree", "u1", true, 20},
		{"u2b", "tree", "r1b", true, 21},
		{"r2c", "tree", "u2b", false, 22},
		{"r2b", "tree", "u2b", true, 23},
		{"a1", "rewound", "", false, 1},
		{"a2", "rewound", "a1", false, 2},
		{"l1", "line", "", true, 5},
		{"l2", "line", "l1", true, 6},
	}
	for i, r := range rows {
		c, err := encodeContent(agentcore.TextContent(r.id))
		if err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, run_id, created_at, type,
				parent_id, active, chosen_at)
			SELECT ?, ?, 'r', coalesce((SELECT max(seq) FROM messages WHERE thread_id = ?), 0) + 1, 'user', ?, 'complete', '', ?, '',
				nullif(?, ''), ?, ?`, r.id, r.thread, r.thread, string(c), 1000+i, r.parent, r.active, r.chosen)
	}
	raw.Close()

	db := openAt(t, path)
	for th, want := range map[string]string{"tree": "u1 r1b u2b r2b", "rewound": "", "line": "l1 l2"} {
		checkTree(t, db, th)
		if got := texts(t, db, th); got != want {
			t.Errorf("thread %s shows %q after the migration, want %q", th, got, want)
		}
	}
	var flag int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'active'`).Scan(&flag); err != nil || flag != 0 {
		t.Errorf("messages.active after 0014: %d, %v", flag, err)
	}
	for _, tc := range []struct{ thread, to, want string }{
		{"tree", "r1", "u1 r1 u2 r2 u4b"}, // the child chosen last at each level
		{"tree", "u4", "u1 r1 u2 r2 u4 r4"},
		{"tree", "r1b", "u1 r1b u2b r2b"},   // r2b was chosen after r2c
		{"tree", "r1", "u1 r1 u2 r2 u4 r4"}, // the branch as last seen, kept since
		{"tree", "r2c", "u1 r1b u2b r2c"},
		{"rewound", "a1", "a1 a2"},
	} {
		o := treeOps{t, db, tc.thread}
		o.switchTo(tc.to)
		if got := texts(t, db, tc.thread); got != tc.want {
			t.Errorf("switched to %s: %q, want %q", tc.to, got, tc.want)
		}
	}
}

// segments is how many strands the thread's active branch passes.
func segments(t testing.TB, db *DB, threadID string) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRowContext(context.Background(), `SELECT count(*) FROM path_segments WHERE thread_id = ?`,
		threadID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Regenerating a reply or editing a recent message keeps the active branch
// one strand long (the few messages of the old version move to a strand of
// their own); an edit above more than moveAtMost messages starts a strand,
// and the old branch comes back whole either way.
func TestTreeStrandsStayShort(t *testing.T) {
	db := openTest(t)
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{}).ID}
	var all []agentcore.Message
	for i := range moveAtMost + 6 {
		all = append(all, o.append(agentcore.RoleUser, fmt.Sprintf("m%d", i)))
	}
	last := all[len(all)-1]
	// Regenerate the last reply, then a recent message with a few below it.
	o.rewind(all[len(all)-2].ID)
	o.append(agentcore.RoleAssistant, "again")
	o.rewind(all[len(all)-5].ID)
	o.append(agentcore.RoleAssistant, "edited")
	if n := segments(t, db, o.th); n != 1 {
		t.Errorf("after a regeneration and a recent edit the active branch passes %d strands, want 1", n)
	}
	// An edit near the start, above more than moveAtMost messages.
	o.rewind(all[1].ID)
	early := o.append(agentcore.RoleUser, "early edit")
	o.append(agentcore.RoleAssistant, "its reply")
	if n := segments(t, db, o.th); n != 2 {
		t.Errorf("after an edit above %d messages the active branch passes %d strands, want 2", moveAtMost+4, n)
	}
	o.switchTo(last.ID)
	if got := mustList(t, db, o.th); len(got) != len(all) || got[len(got)-1].ID != last.ID {
		t.Errorf("back on the first version: %d messages ending %s, want %d ending %s", len(got), got[len(got)-1].ID,
			len(all), last.ID)
	}
	o.switchTo(early.ID)
	o.shows("m0 m1 early edit its reply")
}

// A database of 0016 (active_path, a kept branch in left_path and
// branch_leaf) opens on strands with the same active branch, the kept
// branch coming back as it was, and the old tables gone.
func TestTreeMigrationStrands(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := databaseAsOf(t, 16)
	exec(`INSERT INTO resources (id, created_at, updated_at) VALUES ('r', 0, 0)`)
	exec(`INSERT INTO threads (id, resource_id, title, created_at, updated_at) VALUES ('th', 'r', 't', 0, 0)`)
	// u1 r1 u2 r2 was left for r1b u2b r2b; r2c is an older version of r2b.
	for i, r := range []struct {
		id, parent string
		active     bool
	}{
		{"u1", "", true}, {"r1", "u1", false}, {"u2", "r1", false}, {"r2", "u2", false},
		{"r1b", "u1", true}, {"u2b", "r1b", true}, {"r2c", "u2b", false}, {"r2b", "u2b", true},
	} {
		c, err := encodeContent(agentcore.TextContent(r.id))
		if err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO messages (id, thread_id, resource_id, seq, role, content, status, run_id, created_at, type,
				parent_id, chosen_at)
			VALUES (?, 'th', 'r', ?, 'user', ?, 'complete', '', 0, '', nullif(?, ''), ?)`, r.id, i+1, string(c), r.parent, i)
		if r.active {
			exec(`INSERT INTO active_path (thread_id, seq, pk) SELECT 'th', seq, pk FROM messages WHERE id = ?`, r.id)
		}
	}
	exec(`INSERT INTO branch_leaf (thread_id, seq, pk, leaf_seq) SELECT 'th', seq, pk, 4 FROM messages WHERE id = 'r1'`)
	exec(`INSERT INTO left_path (thread_id, seq, pk, head) SELECT 'th', seq, pk, 2 FROM messages WHERE seq BETWEEN 2 AND 4`)
	raw.Close()

	db := openAt(t, path)
	o := treeOps{t, db, "th"}
	checkTree(t, db, "th")
	o.shows("u1 r1b u2b r2b")
	if n := segments(t, db, "th"); n != 1 {
		t.Errorf("the migrated active branch passes %d strands, want 1", n)
	}
	o.switchTo("r1")
	o.shows("u1 r1 u2 r2")
	o.switchTo("r2c")
	o.shows("u1 r1b u2b r2c")
	var old int
	if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name IN ('active_path', 'left_path')`).Scan(&old); err != nil || old != 0 {
		t.Errorf("%d of the old tables after 0017 (%v)", old, err)
	}
}
