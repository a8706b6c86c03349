package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"parley/agentcore/llm"
)

// Provider keys are secrets: they live in the OS keyring (Keychain, Windows
// Credential Manager, the Secret Service) when there is one, else in
// keys.json, readable by the user only, in the data folder. Never in the
// database, never sent back to a page.

// Keyring is the OS keyring's interface (go-keyring's); tests inject one.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

const (
	keyringService = "parley"
	// keyringTimeout bounds one keyring call: a keyring that waits for an
	// unlock prompt nobody answers must not hold up the start.
	keyringTimeout = 3 * time.Second
	keysFile       = "keys.json"
	maxKeyLen      = 4096
)

// Where a saved key is kept.
const (
	KeptInKeyring = "keyring"
	KeptInFile    = "file"
)

// osKeyring is the OS keyring through go-keyring, each call bounded.
type osKeyring struct{}

func (osKeyring) Get(service, user string) (string, error) {
	var v string
	err := bounded(func() (err error) { v, err = keyring.Get(service, user); return err })
	return v, err
}

func (osKeyring) Set(service, user, password string) error {
	return bounded(func() error { return keyring.Set(service, user, password) })
}

func (osKeyring) Delete(service, user string) error {
	return bounded(func() error { return keyring.Delete(service, user) })
}

func bounded(f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(keyringTimeout):
		return fmt.Errorf("the OS keyring did not answer within %s", keyringTimeout)
	}
}

// keyFileDoc is keys.json.
type keyFileDoc struct {
	// InKeyring lists the providers whose key is in the OS keyring.
	InKeyring []string `json:"inKeyring,omitempty"`
	// Keys are the keys kept here because the keyring did not take them.
	Keys map[string]string `json:"keys,omitempty"`
}

// KeyStore holds the provider keys saved in Settings.
type KeyStore struct {
	path string
	dir  string
	ring Keyring

	mu       sync.Mutex
	doc      keyFileDoc
	keys     map[string]string
	problems map[string]string // per provider: why its saved key could not be read
	ringErr  error             // the keyring's last refusal, for Settings
}

// OpenKeys reads the keys saved for the data folder dir. ring nil: the OS
// keyring. A keyring that cannot be read costs only the keys kept in it
// (Problem says so); it never fails the start.
func OpenKeys(dir string, ring Keyring) (*KeyStore, error) {
	if ring == nil {
		ring = osKeyring{}
	}
	k := &KeyStore{path: filepath.Join(dir, keysFile), dir: dir, ring: ring, keys: map[string]string{}, problems: map[string]string{}}
	b, err := os.ReadFile(k.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return k, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", k.path, err)
	}
	if err := json.Unmarshal(b, &k.doc); err != nil {
		return nil, fmt.Errorf("read %s: not the keys file Parley writes (%v); move it away to start afresh", k.path, err)
	}
	if fi, err := os.Stat(k.path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		_ = os.Chmod(k.path, 0o600) // someone loosened it: only the user may read keys
	}
	for p, v := range k.doc.Keys {
		k.keys[p] = v
	}
	for _, p := range k.doc.InKeyring {
		v, err := ring.Get(keyringService, k.account(p))
		if err != nil {
			k.problems[p] = fmt.Sprintf("the key saved in the OS keyring could not be read: %v", err)
			continue
		}
		k.keys[p] = v
	}
	return k, nil
}

// account is the keyring account of a provider's key: one per data
// folder, so that two Parleys (or a test) never share keys by accident.
func (k *KeyStore) account(provider string) string {
	return provider + " (" + k.dir + ")"
}

// Keys are the saved keys by provider.
func (k *KeyStore) Keys() map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]string, len(k.keys))
	for p, v := range k.keys {
		out[p] = v
	}
	return out
}

// Where says where a provider's saved key is kept ("" when none is).
func (k *KeyStore) Where(provider string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case slices.Contains(k.doc.InKeyring, provider):
		return KeptInKeyring
	case k.doc.Keys[provider] != "":
		return KeptInFile
	}
	return ""
}

// Problem is why a provider's saved key could not be read ("" if none).
func (k *KeyStore) Problem(provider string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.problems[provider]
}

// KeyringError is why the last key went to the file instead of the
// keyring (nil when it did not).
func (k *KeyStore) KeyringError() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ringErr
}

// Path is the fallback file.
func (k *KeyStore) Path() string { return k.path }

// Set saves a provider's key: in the OS keyring, else in the file.
func (k *KeyStore) Set(provider, key string) (where string, err error) {
	if !slices.Contains(llm.Providers(), provider) {
		return "", fmt.Errorf("unknown provider %q", provider)
	}
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		return "", errors.New("the key is empty")
	case len(key) > maxKeyLen:
		return "", fmt.Errorf("the key is longer than %d characters", maxKeyLen)
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x21 || r == 0x7f }):
		return "", errors.New("the key has spaces or control characters in it")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	doc := k.clone()
	if err := k.ring.Set(keyringService, k.account(provider), key); err == nil {
		where, k.ringErr = KeptInKeyring, nil
		if !slices.Contains(doc.InKeyring, provider) {
			doc.InKeyring = append(doc.InKeyring, provider)
		}
		delete(doc.Keys, provider)
	} else {
		where, k.ringErr = KeptInFile, err
		doc.InKeyring = slices.DeleteFunc(doc.InKeyring, func(p string) bool { return p == provider })
		doc.Keys[provider] = key
	}
	if err := k.write(doc); err != nil {
		return "", err
	}
	k.doc, k.keys[provider] = doc, key
	delete(k.problems, provider)
	return where, nil
}

// Delete forgets a provider's saved key, wherever it is kept.
func (k *KeyStore) Delete(provider string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	doc := k.clone()
	if slices.Contains(doc.InKeyring, provider) {
		if err := k.ring.Delete(keyringService, k.account(provider)); err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return fmt.Errorf("remove the %s key from the OS keyring: %w", provider, err)
		}
		doc.InKeyring = slices.DeleteFunc(doc.InKeyring, func(p string) bool { return p == provider })
	}
	delete(doc.Keys, provider)
	if err := k.write(doc); err != nil {
		return err
	}
	k.doc = doc
	delete(k.keys, provider)
	delete(k.problems, provider)
	return nil
}

func (k *KeyStore) clone() keyFileDoc {
	doc := keyFileDoc{InKeyring: slices.Clone(k.doc.InKeyring), Keys: map[string]string{}}
	for p, v := range k.doc.Keys {
		doc.Keys[p] = v
	}
	return doc
}

// write replaces the file in one step, readable by the user only.
func (k *KeyStore) write(doc keyFileDoc) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(k.dir, ".keys-*.json") // created 0600
	if err != nil {
		return fmt.Errorf("save keys: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		return fmt.Errorf("save keys: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("save keys: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("save keys: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save keys: %w", err)
	}
	if err := os.Rename(f.Name(), k.path); err != nil {
		return fmt.Errorf("save keys: %w", err)
	}
	return nil
}
