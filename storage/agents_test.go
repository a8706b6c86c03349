package storage

import (
	"encoding/json"
	"errors"
	"testing"

	"parley/agentcore"
)

func TestAgentDefinitions(t *testing.T) {
	ctx := t.Context()
	db := openTest(t)
	if list, err := db.AgentDefinitions(ctx); err != nil || len(list) != 0 {
		t.Fatalf("a new store lists %v, %v", list, err)
	}
	if err := db.PutAgentDefinition(ctx, "a", json.RawMessage(`{"name":"A"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.PutAgentDefinition(ctx, "b", json.RawMessage(`{"name":"B"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.PutAgentDefinition(ctx, "a", json.RawMessage(`{"name":"A2"}`)); err != nil {
		t.Fatal(err)
	}
	list, err := db.AgentDefinitions(ctx)
	if err != nil || len(list) != 2 || string(list[0]) != `{"name":"A2"}` || string(list[1]) != `{"name":"B"}` {
		t.Fatalf("list after an edit = %s, %v; want A2 then B (an edit keeps its place)", list, err)
	}
	if got, err := db.AgentDefinition(ctx, "b"); err != nil || string(got) != `{"name":"B"}` {
		t.Fatalf("get b = %s, %v", got, err)
	}
	if err := db.PutAgentDefinition(ctx, "c", json.RawMessage(`{not json`)); err == nil {
		t.Fatal("a definition that is not JSON was stored")
	}
	if err := db.DeleteAgentDefinition(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AgentDefinition(ctx, "a"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("get a deleted agent: %v, want ErrNotFound", err)
	}
	if err := db.DeleteAgentDefinition(ctx, "a"); !errors.Is(err, agentcore.ErrNotFound) {
		t.Fatalf("delete twice: %v, want ErrNotFound", err)
	}
}
