package app

import (
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	v, c, d := Version, Commit, BuildDate
	t.Cleanup(func() { Version, Commit, BuildDate = v, c, d })

	Version, Commit, BuildDate = "1.2.3", "0123abc", "2001-09-09T01:46:40Z"
	if got, want := versionLine(), "parley 1.2.3 (commit 0123abc, built 2001-09-09T01:46:40Z)"; got != want {
		t.Errorf("release build: %q, want %q", got, want)
	}
	// A plain build (go test's binary is one) still says what it is.
	Version, Commit, BuildDate = "", "", ""
	if got := versionLine(); !strings.HasPrefix(got, "parley ") || !strings.Contains(got, "(commit ") {
		t.Errorf("plain build: %q", got)
	}
}
