package storage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

func TestSettings(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.GetSetting(ctx, "approvals"); ok || err != nil {
		t.Fatalf("unset: ok=%v err=%v", ok, err)
	}
	if err := db.SetSetting(ctx, "approvals", json.RawMessage(`{"edit":"ask"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSetting(ctx, "approvals", json.RawMessage(`{"edit":"allow"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSetting(ctx, "bad", json.RawMessage(`{`)); err == nil {
		t.Fatal("invalid JSON stored")
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, ok, err := db.GetSetting(ctx, "approvals")
	if !ok || err != nil || string(v) != `{"edit":"allow"}` {
		t.Fatalf("after reopen: %s %v %v", v, ok, err)
	}
}
