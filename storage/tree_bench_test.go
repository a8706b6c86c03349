package storage

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"parley/agentcore"
)

const (
	benchChat   = 10_000 // messages on the active branch
	benchBranch = 10     // every benchBranch-th reply was regenerated once
	benchPage   = 50     // the page a chat opens on
)

// seedBranches stores a chat of benchChat active messages, alternately a
// question and a reply, as one transaction of rows (AppendMessage would take
// a transaction each). With branched, every benchBranch-th reply has an
// older version, regenerated at once: an inactive sibling just before it,
// as RewindTo and AppendMessage leave it. It returns the thread and the
// first regenerated reply with its old version.
func seedBranches(b *testing.B, db *DB, branched bool) (thread, reply, old string) {
	ctx := context.Background()
	th := mustThread(b, db, agentcore.Thread{Title: "long"})
	err := db.write(ctx, func(tx *sql.Tx) error {
		insert, err := tx.PrepareContext(ctx, `INSERT INTO messages (`+insertCols+`, parent_id, chosen_at)
			VALUES (?, ?, ?, ?, ?, ?, 'complete', '', ?, '', nullif(?, ''), ?)`)
		if err != nil {
			return err
		}
		defer insert.Close()
		onPath, err := tx.PrepareContext(ctx, `INSERT INTO active_path (thread_id, seq, pk) VALUES (?, ?, last_insert_rowid())`)
		if err != nil {
			return err
		}
		defer onPath.Close()
		parent, seq := "", int64(0)
		add := func(id string, role agentcore.Role, text string, active bool) error {
			c, err := encodeContent(agentcore.TextContent(text))
			if err != nil {
				return err
			}
			seq++
			if _, err = insert.ExecContext(ctx, id, th.ID, th.ResourceID, seq, role, string(c), seq, parent, seq); err != nil || !active {
				return err
			}
			_, err = onPath.ExecContext(ctx, th.ID, seq)
			return err
		}
		for i := range benchChat {
			role, text := agentcore.RoleUser, fmt.Sprintf("question %d with some words in it", i)
			if i%2 == 1 {
				role, text = agentcore.RoleAssistant, fmt.Sprintf("An answer %d of a few hundred bytes. %0300d", i, i)
			}
			id := NewID()
			if branched && i%2 == 1 && (i/2)%benchBranch == 1 {
				was := NewID()
				if err := add(was, role, "the first version of "+text, false); err != nil {
					return err
				}
				if old == "" {
					reply, old = id, was
				}
			}
			if err := add(id, role, text, true); err != nil {
				return err
			}
			parent = id
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return th.ID, reply, old
}

// openChat is what the server reads to open a chat: the last page of the
// active branch and the versions of its messages.
func openChat(b *testing.B, db *DB, threadID string) {
	ctx := context.Background()
	page, err := db.ListMessages(ctx, threadID, agentcore.MessageQuery{Limit: benchPage, Last: true})
	if err != nil || len(page) != benchPage {
		b.Fatalf("%d messages, %v", len(page), err)
	}
	if _, err := db.Siblings(ctx, threadID, msgIDs(page)...); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBranches: opening a 10,000-message chat with 1,000 regenerated
// replies against a linear one of the same length (issue 15 asks for
// within 2×), and switching the version of a reply near its start, there
// and back: the whole active branch below it changes twice. "linear" has
// no version to switch to: its switch is RewindTo near the start and
// SwitchBranch back down to the leaf, which moves the same rows.
func BenchmarkBranches(b *testing.B) {
	ctx := context.Background()
	for _, branched := range []bool{false, true} {
		name := map[bool]string{false: "linear", true: "branched"}[branched]
		b.Run("open/"+name, func(b *testing.B) {
			db := openTest(b)
			th, _, _ := seedBranches(b, db, branched)
			for b.Loop() {
				openChat(b, db, th)
			}
		})
		b.Run("switch/"+name, func(b *testing.B) {
			db := openTest(b)
			th, reply, old := seedBranches(b, db, branched)
			there, back := func() error { return db.SwitchBranch(ctx, th, old) }, func() error { return db.SwitchBranch(ctx, th, reply) }
			if !branched {
				list, err := db.ListMessages(ctx, th, agentcore.MessageQuery{Limit: 4})
				if err != nil {
					b.Fatal(err)
				}
				there = func() error { return db.RewindTo(ctx, th, list[2].ID) }
				back = func() error { return db.SwitchBranch(ctx, th, list[3].ID) }
			}
			var away, home time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := there(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := back(); err != nil {
					b.Fatal(err)
				}
				away, home = away+t1.Sub(t0), home+time.Since(t1)
			}
			// Away deactivates the branch below; back activates it again,
			// walking down the chosen children.
			b.ReportMetric(float64(away.Nanoseconds())/float64(b.N), "ns/away")
			b.ReportMetric(float64(home.Nanoseconds())/float64(b.N), "ns/back")
			checkTree(b, db, th)
		})
	}
}
