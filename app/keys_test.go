package app

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

// brokenKeyring is a machine without a usable keyring (no Secret Service,
// as on CI).
type brokenKeyring struct{}

func (brokenKeyring) Get(string, string) (string, error) { return "", errors.New("no D-Bus session") }
func (brokenKeyring) Set(string, string, string) error   { return errors.New("no D-Bus session") }
func (brokenKeyring) Delete(string, string) error        { return errors.New("no D-Bus session") }

// With no keyring, keys go to keys.json, readable by the user only, and
// come back from it after a restart.
func TestKeysFallBackToFile(t *testing.T) {
	dir := t.TempDir()
	k, err := OpenKeys(dir, brokenKeyring{})
	if err != nil {
		t.Fatal(err)
	}
	where, err := k.Set("openai", "sk-test-0123456789abcdef")
	if err != nil || where != KeptInFile {
		t.Fatalf("Set = %q, %v", where, err)
	}
	if k.KeyringError() == nil || !strings.Contains(k.KeyringError().Error(), "no D-Bus session") {
		t.Fatalf("the keyring's refusal is not kept for Settings: %v", k.KeyringError())
	}
	path := filepath.Join(dir, "keys.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("keys.json mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := OpenKeys(dir, brokenKeyring{})
	if err != nil || again.Keys()["openai"] != "sk-test-0123456789abcdef" || again.Where("openai") != KeptInFile {
		t.Fatalf("after a restart: %v %v %q", again.Keys(), err, again.Where("openai"))
	}
	if err := again.Delete("openai"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "sk-test") {
		t.Fatalf("a removed key is still in the file: %s", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".keys-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// With a keyring, the key goes there and the file only says so; when the
// keyring later fails, the key goes to the file, and a key the keyring
// can no longer give back is reported, not fatal.
func TestKeysInKeyringAndFailover(t *testing.T) {
	keyring.MockInit()
	t.Cleanup(keyring.MockInit)
	dir := t.TempDir()
	k, err := OpenKeys(dir, osKeyring{})
	if err != nil {
		t.Fatal(err)
	}
	if where, err := k.Set("anthropic", "sk-ant-secret-111122223333"); err != nil || where != KeptInKeyring {
		t.Fatalf("Set = %q, %v", where, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "keys.json"))
	if strings.Contains(string(b), "sk-ant") || !strings.Contains(string(b), "anthropic") {
		t.Fatalf("keys.json should name the provider, not hold its key: %s", b)
	}
	if v, err := keyring.Get(keyringService, k.account("anthropic")); err != nil || v != "sk-ant-secret-111122223333" {
		t.Fatalf("keyring holds %q, %v", v, err)
	}
	again, err := OpenKeys(dir, osKeyring{})
	if err != nil || again.Keys()["anthropic"] != "sk-ant-secret-111122223333" {
		t.Fatalf("after a restart: %v %v", again.Keys(), err)
	}

	keyring.MockInitWithError(errors.New("the keyring is locked"))
	if where, err := again.Set("openai", "sk-openai-444455556666"); err != nil || where != KeptInFile {
		t.Fatalf("failover Set = %q, %v", where, err)
	}
	third, err := OpenKeys(dir, osKeyring{})
	if err != nil {
		t.Fatalf("a failing keyring must not fail the start: %v", err)
	}
	if third.Keys()["openai"] != "sk-openai-444455556666" {
		t.Fatalf("the file's key is lost: %v", third.Keys())
	}
	if _, ok := third.Keys()["anthropic"]; ok || !strings.Contains(third.Problem("anthropic"), "the keyring is locked") {
		t.Fatalf("an unreadable keyring key: %v %q", third.Keys(), third.Problem("anthropic"))
	}
}

func TestKeysRefuseBadInput(t *testing.T) {
	k, err := OpenKeys(t.TempDir(), brokenKeyring{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ provider, key, want string }{
		{"nobody", "k", "unknown provider"},
		{"openai", "  ", "empty"},
		{"openai", "sk one", "spaces"},
		{"openai", strings.Repeat("k", 5000), "longer"},
	} {
		if _, err := k.Set(c.provider, c.key); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%q, …) = %v, want %q", c.provider, err, c.want)
		}
	}
	if len(k.Keys()) != 0 {
		t.Fatalf("refused keys were kept: %v", k.Keys())
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keys.json"), []byte("{not json"), 0o600)
	if _, err := OpenKeys(dir, brokenKeyring{}); err == nil || !strings.Contains(err.Error(), "keys.json") {
		t.Fatalf("a damaged keys.json: %v", err)
	}
}
