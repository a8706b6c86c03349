package app

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// desktopFile is where a running desktop app says how to reach it:
// <data>/desktop.json, readable by its user only, gone when it quits. A
// script on the same account (`parley api notify`, curl) reads the address
// and the token from it; the window itself never needs it.
const desktopFile = "desktop.json"

// desktopAddress is desktop.json.
type desktopAddress struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// writeDesktopAddress publishes the desktop server's address and token.
func writeDesktopAddress(dataDir string, a desktopAddress) (remove func(), err error) {
	raw, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, desktopFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return nil, fmt.Errorf("publish the desktop address: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("publish the desktop address: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// readDesktopAddress reads a running desktop app's address; ok is false
// when none is published in dataDir.
func readDesktopAddress(dataDir string) (desktopAddress, bool) {
	raw, err := os.ReadFile(filepath.Join(dataDir, desktopFile))
	if err != nil {
		return desktopAddress{}, false
	}
	var a desktopAddress
	if json.Unmarshal(raw, &a) != nil || a.URL == "" {
		return desktopAddress{}, false
	}
	return a, true
}

// newToken is a random API token.
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// dataDirFrom is the data folder as `parley serve` would pick it.
func dataDirFrom(getenv func(string) string) string {
	if d := getenv("PARLEY_DATA_DIR"); d != "" {
		return d
	}
	d, err := defaultDataDir()
	if err != nil {
		return ""
	}
	return d
}
