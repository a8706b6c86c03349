package storage

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"parley/agentcore"
)

// ImportThreads stores whole threads with their messages in one
// transaction: every thread and message, or nothing.
//
// Ids are kept when they are free, so a file exported from one Parley and
// imported into another comes back with the same ids. Ids Parley would not
// accept from its API (not agentcore.ValidID) are replaced first, each by
// a new one (ThreadImport.ReissueIDs): they end up in URLs and the page.
// When the thread's id
// or any of its message ids is already taken (the same file imported twice),
// that thread and all its messages get new ids. Messages take Seq from their
// position; their thread and resource are the thread's; a message stored as
// streaming (its run is gone) becomes interrupted; empty timestamps become
// the thread's creation time, or now. Runs are not imported: RunID is
// cleared.
//
// The messages are a tree (see importTree): a message follows its
// ParentID, which must name an earlier message of the same import (else
// the import is refused, naming the message), and the active branch is
// the path down to the last message marked Active. A thread none of whose
// messages names a parent, and whose messages are all marked Active or
// all not (an export made before the tree, another app's chat), is one
// branch, each message following the one before, all active.
func (db *DB) ImportThreads(ctx context.Context, in []agentcore.ThreadImport) ([]agentcore.Thread, error) {
	out := make([]agentcore.Thread, 0, len(in))
	err := db.write(ctx, func(tx *sql.Tx) error {
		for i, imp := range in {
			t, err := importThread(ctx, tx, imp)
			if err != nil {
				return fmt.Errorf("thread %d (%q): %w", i+1, imp.Thread.Title, err)
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import threads: %w", err)
	}
	return out, nil
}

func importThread(ctx context.Context, tx *sql.Tx, imp agentcore.ThreadImport) (agentcore.Thread, error) {
	imp.Messages = slices.Clone(imp.Messages) // ReissueIDs writes them: the caller's stay as given
	imp.ReissueIDs()
	t := imp.Thread
	parents, active, err := importTree(imp.Messages)
	if err != nil {
		return agentcore.Thread{}, err
	}
	fresh, err := idsTaken(ctx, tx, imp)
	if err != nil {
		return agentcore.Thread{}, err
	}
	if fresh || t.ID == "" {
		t.ID = NewID()
	}
	if t.ResourceID == "" {
		t.ResourceID = DefaultResourceID
	}
	t.CreatedAt = orNow(t.CreatedAt)
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	t.UpdatedAt = orNow(t.UpdatedAt)
	meta, err := marshalMap(t.Metadata)
	if err != nil {
		return agentcore.Thread{}, err
	}
	n := ms(now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO resources (id, created_at, updated_at)
		VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`, t.ResourceID, n, n); err != nil {
		return agentcore.Thread{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO threads (`+threadCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ResourceID, t.Title, meta, t.Pinned, ms(t.CreatedAt), ms(t.UpdatedAt)); err != nil {
		return agentcore.Thread{}, err
	}
	insert, err := tx.PrepareContext(ctx, `INSERT INTO messages
		(id, thread_id, resource_id, seq, role, content, status, run_id, created_at, type, parent_id, chosen_at, strand)
		VALUES (?, ?, ?, ?, ?, ?, ?, '', ?, ?, nullif(?, ''), ?, ?)`)
	if err != nil {
		return agentcore.Thread{}, err
	}
	defer insert.Close()
	strand, forks := strandsOf(parents, active)
	leaf := -1
	chosen := ms(now()) // the active branch was chosen last: a switch below it follows it
	ids := make([]string, len(imp.Messages))
	for i, m := range imp.Messages {
		if m.ID == "" || fresh {
			m.ID = NewID()
		}
		ids[i] = m.ID
		if m.Role == "" {
			return agentcore.Thread{}, fmt.Errorf("message %d: no role", i+1)
		}
		switch m.Status {
		case "":
			m.Status = agentcore.StatusComplete
		case agentcore.StatusStreaming:
			m.Status = agentcore.StatusInterrupted
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = t.CreatedAt
		}
		content, err := encodeContent(m.Content)
		if err != nil {
			return agentcore.Thread{}, fmt.Errorf("message %d: encode content: %w", i+1, err)
		}
		created := ms(orNow(m.CreatedAt))
		parent, chosenAt := "", created
		if p := parents[i]; p >= 0 {
			parent = ids[p]
		}
		if active[i] {
			chosenAt = chosen
		}
		if _, err := insert.ExecContext(ctx, m.ID, t.ID, t.ResourceID, i+1, m.Role, string(content), m.Status,
			created, m.Type, parent, chosenAt, strand[i]); err != nil {
			return agentcore.Thread{}, fmt.Errorf("message %d: %w", i+1, err)
		}
		if active[i] {
			leaf = i
		}
	}
	if err := writeStrands(ctx, tx, t.ID, strand, forks, leaf); err != nil {
		return agentcore.Thread{}, fmt.Errorf("the branches: %w", err)
	}
	return t, nil
}

// importTree reads the shape of an imported thread (see ImportThreads):
// parents[i] is the index of message i's parent, -1 for a root; active[i]
// says whether it is on the active branch. A parent must come before its
// child, so the shape is a tree, with no cycle, whatever the file says;
// it is walked without recursion, however deep.
func importTree(msgs []agentcore.Message) (parents []int, active []bool, err error) {
	parents, active = make([]int, len(msgs)), make([]bool, len(msgs))
	linked, marked := false, 0
	for _, m := range msgs {
		linked = linked || m.ParentID != ""
		if m.Active {
			marked++
		}
	}
	if !linked && (marked == 0 || marked == len(msgs)) {
		for i := range msgs {
			parents[i], active[i] = i-1, true
		}
		return parents, active, nil
	}
	index := make(map[string]int, len(msgs))
	leaf := len(msgs) - 1 // none marked: the last message's branch
	for i, m := range msgs {
		parents[i] = -1
		if m.ParentID != "" {
			p, ok := index[m.ParentID]
			if !ok {
				return nil, nil, fmt.Errorf("message %d (id %.40q): its parent %.40q is not an earlier message of this thread",
					i+1, m.ID, m.ParentID)
			}
			parents[i] = p
		}
		if m.ID != "" {
			if j, dup := index[m.ID]; dup {
				return nil, nil, fmt.Errorf("message %d: its id %.40q repeats message %d's", i+1, m.ID, j+1)
			}
			index[m.ID] = i
		}
		if m.Active {
			leaf = i
		}
	}
	for i := leaf; i >= 0; i = parents[i] {
		active[i] = true
	}
	return parents, active, nil
}

// idsTaken reports whether the thread's id or any of its message ids is
// already in the database, or a message id repeats within the thread.
func idsTaken(ctx context.Context, tx *sql.Tx, imp agentcore.ThreadImport) (bool, error) {
	if imp.Thread.ID != "" {
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE id = ?)`,
			imp.Thread.ID).Scan(&taken); err != nil || taken {
			return taken, err
		}
	}
	seen := make(map[string]bool, len(imp.Messages))
	check, err := tx.PrepareContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE id = ?)`)
	if err != nil {
		return false, err
	}
	defer check.Close()
	for _, m := range imp.Messages {
		if m.ID == "" {
			continue
		}
		if seen[m.ID] {
			return true, nil
		}
		seen[m.ID] = true
		var taken bool
		if err := check.QueryRowContext(ctx, m.ID).Scan(&taken); err != nil || taken {
			return taken, err
		}
	}
	return false, nil
}
