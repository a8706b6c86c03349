package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/hostile"
)

// treeShape is a thread's tree without its ids: per message in seq order,
// its role, text, the position of its parent (-1: a root) and whether it is
// active. Two threads with the same shape are the same tree.
func treeShape(t testing.TB, ms []agentcore.Message) []string {
	t.Helper()
	pos := map[string]int{}
	out := make([]string, 0, len(ms))
	for i, m := range ms {
		p := -1
		if m.ParentID != "" {
			var ok bool
			if p, ok = pos[m.ParentID]; !ok {
				t.Fatalf("message %s names parent %s, not an earlier message", m.ID, m.ParentID)
			}
		}
		pos[m.ID] = i
		out = append(out, fmt.Sprintf("%s %q parent=%d active=%v", m.Role, m.Content.Text(), p, m.Active))
	}
	return out
}

// sampleTree makes a chat with an edited first message, a regenerated
// reply with a follow-up under it, and the first branch shown again.
func sampleTree(t *testing.T, db *DB) string {
	o := treeOps{t, db, mustThread(t, db, agentcore.Thread{Title: "tree"}).ID}
	u1 := o.append(agentcore.RoleUser, "first question")
	r1 := o.append(agentcore.RoleAssistant, "first answer")
	o.rewind(u1.ID)
	o.append(agentcore.RoleAssistant, "second answer")
	o.append(agentcore.RoleUser, "follow-up")
	o.append(agentcore.RoleAssistant, "follow-up answer")
	o.rewind("")
	o.append(agentcore.RoleUser, "edited question")
	o.append(agentcore.RoleAssistant, "edited answer")
	o.switchTo(r1.ID)
	o.shows("first question first answer")
	return o.th
}

// A tree read with ListTree imports back as the same tree: every branch,
// each message under its parent, the same branch active; ids kept where
// they are free and new where they are taken, parent links following.
func TestImportTreeRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	src := sampleTree(t, db)
	th, err := db.GetThread(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := db.ListTree(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	want := treeShape(t, tree)
	for _, into := range []struct {
		name    string
		db      *DB
		sameIDs bool
	}{{"the same database (ids taken)", db, false}, {"another database (ids free)", openTest(t), true}} {
		t.Run(into.name, func(t *testing.T) {
			got, err := into.db.ImportThreads(ctx, []agentcore.ThreadImport{{Thread: th, Messages: tree}})
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, into.db, got[0].ID)
			back, err := into.db.ListTree(ctx, got[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if shape := treeShape(t, back); !slices.Equal(shape, want) {
				t.Fatalf("imported tree\n got %q\nwant %q", shape, want)
			}
			if same := slices.Equal(msgIDs(back), msgIDs(tree)); same != into.sameIDs {
				t.Errorf("ids kept: %v, want %v", same, into.sameIDs)
			}
			if s := texts(t, into.db, got[0].ID); s != "first question first answer" {
				t.Errorf("imported chat shows %q", s)
			}
			// The branch left comes back as it was left: switching to the
			// edit follows it down to its reply.
			if err := into.db.SwitchBranch(ctx, got[0].ID, back[6].ID); err != nil {
				t.Fatal(err)
			}
			if s := texts(t, into.db, got[0].ID); s != "edited question edited answer" {
				t.Errorf("after switching to the edit the chat shows %q", s)
			}
		})
	}
}

// A file whose messages say which branch was active, or name no parents,
// is read by the rules of ImportThreads.
func TestImportTreeActiveBranch(t *testing.T) {
	ctx := context.Background()
	msg := func(id, parent string, active bool) agentcore.Message {
		return agentcore.Message{ID: id, ParentID: parent, Active: active, Role: agentcore.RoleUser, Content: agentcore.TextContent(id)}
	}
	cases := []struct {
		name string
		msgs []agentcore.Message
		want string // the chat shown
		n    int    // roots
	}{
		{"no parents, none marked: one branch", []agentcore.Message{msg("a", "", false), msg("b", "", false), msg("c", "", false)}, "a b c", 1},
		{"no parents, all marked: one branch", []agentcore.Message{msg("a", "", true), msg("b", "", true)}, "a b", 1},
		{"no parents, some marked: roots", []agentcore.Message{msg("a", "", false), msg("b", "", true), msg("c", "", false)}, "b", 3},
		{"parents, none marked: the last message's branch", []agentcore.Message{msg("a", "", false), msg("b", "a", false), msg("c", "a", false)}, "a c", 1},
		{"parents, two leaves marked: the later one", []agentcore.Message{msg("a", "", true), msg("b", "a", true), msg("c", "a", true), msg("d", "", false)}, "a c", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			got, err := db.ImportThreads(ctx, []agentcore.ThreadImport{{Thread: agentcore.Thread{Title: "x"}, Messages: tc.msgs}})
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, db, got[0].ID)
			if s := texts(t, db, got[0].ID); s != tc.want {
				t.Errorf("shows %q, want %q", s, tc.want)
			}
			tree, _ := db.ListTree(ctx, got[0].ID)
			roots := 0
			for _, m := range tree {
				if m.ParentID == "" {
					roots++
				}
			}
			if roots != tc.n {
				t.Errorf("%d roots, want %d", roots, tc.n)
			}
		})
	}
}

// A parent that is not an earlier message of the same thread (another
// thread's, a later one, the message itself, a cycle, none at all, or a
// repeated id) refuses the whole import with an error naming the message;
// nothing of it is stored. A very deep tree imports.
func TestImportTreeHostile(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.ImportThreads(ctx, []agentcore.ThreadImport{importSample("other", "elsewhere")}); err != nil {
		t.Fatal(err)
	}
	msg := func(id, parent string) agentcore.Message {
		return agentcore.Message{ID: id, ParentID: parent, Role: agentcore.RoleUser, Content: agentcore.TextContent("x")}
	}
	cases := []struct {
		name string
		msgs []agentcore.Message
		want string
	}{
		{"another thread's message", []agentcore.Message{msg("a", ""), msg("b", "other-ma")}, `message 2 (id "b"): its parent "other-ma" is not an earlier message of this thread`},
		{"a later message", []agentcore.Message{msg("a", "b"), msg("b", "")}, `message 1 (id "a"): its parent "b" is not an earlier message`},
		{"itself", []agentcore.Message{msg("a", ""), msg("b", "b")}, `message 2 (id "b"): its parent "b" is not an earlier message`},
		{"a cycle", []agentcore.Message{msg("a", "c"), msg("b", "a"), msg("c", "b")}, `message 1 (id "a"): its parent "c"`},
		{"a missing parent", []agentcore.Message{msg("a", ""), msg("b", "gone")}, `message 2 (id "b"): its parent "gone"`},
		{"a repeated id", []agentcore.Message{msg("a", ""), msg("b", "a"), msg("a", "b")}, `message 3: its id "a" repeats message 1's`},
		{"a parent whose id was not valid", []agentcore.Message{msg("a/b", ""), msg("c", "a/b")}, `message 2 (id "c"): its parent "a/b"`},
	}
	for i, bad := range hostile.IDs() {
		cases = append(cases, struct {
			name string
			msgs []agentcore.Message
			want string
		}{"hostile parent " + strconv.Itoa(i), []agentcore.Message{msg("a", ""), msg("b", bad)}, `message 2 (id "b"): its parent`})
	}
	threads, messages := count(t, db, "threads"), count(t, db, "messages")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			good := importSample("", "fine")
			_, err := db.ImportThreads(ctx, []agentcore.ThreadImport{good, {Thread: agentcore.Thread{Title: "bad"}, Messages: tc.msgs}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `thread 2 ("bad")`) {
				t.Fatalf("error %v\nwant one saying %s", err, tc.want)
			}
			if n, m := count(t, db, "threads"), count(t, db, "messages"); n != threads || m != messages {
				t.Fatalf("a refused import stored %d threads and %d messages", n-threads, m-messages)
			}
		})
	}

	// 10,000 levels, with a branch near the root, the deep one active.
	const depth = 10_000
	deep := []agentcore.Message{msg("r", ""), msg("side", "r")}
	parent := "r"
	for i := range depth {
		id := "d" + strconv.Itoa(i)
		deep = append(deep, msg(id, parent))
		parent = id
	}
	deep[len(deep)-1].Active = true
	got, err := db.ImportThreads(ctx, []agentcore.ThreadImport{{Thread: agentcore.Thread{Title: "deep"}, Messages: deep}})
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, db, got[0].ID)
	if shown := mustList(t, db, got[0].ID); len(shown) != depth+1 || shown[len(shown)-1].ID != parent {
		t.Fatalf("the deep chat shows %d messages", len(shown))
	}
}
