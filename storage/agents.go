package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// The user's own agents. Each is a JSON definition under its id; the shape
// is app/chat's (chat.AgentDef), so storage keeps it as it is given.

// AgentDefinitions lists the stored agent definitions, oldest first.
func (db *DB) AgentDefinitions(ctx context.Context) ([]json.RawMessage, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT definition FROM agents ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("list agents: %w", err)
		}
		out = append(out, json.RawMessage(s))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return out, nil
}

// AgentDefinition is the definition stored under id; agentcore.ErrNotFound
// when there is none.
func (db *DB) AgentDefinition(ctx context.Context, id string) (json.RawMessage, error) {
	var s string
	err := db.reader.QueryRowContext(ctx, `SELECT definition FROM agents WHERE id = ?`, id).Scan(&s)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", id, notFound(err))
	}
	return json.RawMessage(s), nil
}

// PutAgentDefinition stores def under id: a new agent, or a new definition
// of one (it keeps its place in the list).
func (db *DB) PutAgentDefinition(ctx context.Context, id string, def json.RawMessage) error {
	if !json.Valid(def) {
		return fmt.Errorf("store agent %s: the definition is not JSON", id)
	}
	n := ms(now())
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO agents (id, definition, created_at, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at`,
			id, string(def), n, n)
		return err
	})
	if err != nil {
		return fmt.Errorf("store agent %s: %w", id, err)
	}
	return nil
}

// DeleteAgentDefinition removes the agent id; agentcore.ErrNotFound when
// there is none.
func (db *DB) DeleteAgentDefinition(ctx context.Context, id string) error {
	err := affected(db.writer.ExecContext(ctx, `DELETE FROM agents WHERE id = ?`, id))
	if err != nil {
		return fmt.Errorf("delete agent %s: %w", id, err)
	}
	return nil
}
