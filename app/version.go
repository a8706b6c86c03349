package app

import (
	"fmt"
	"runtime/debug"
)

// What `parley version` prints. A release build sets all three at link time
// (build/dist.sh: -ldflags "-X parley/app.Version=1.2.3 -X parley/app.Commit=…
// -X parley/app.BuildDate=…"); a plain `go build` leaves them empty and the
// version line falls back to what the go command stamped into the binary
// (the module version, the VCS revision and its commit time).
var (
	Version   string // a release's version, "1.2.3"
	Commit    string // the full commit hash it was built from
	BuildDate string // when it was built, RFC 3339 in UTC
)

// versionLine is the one line `parley version` prints:
// "parley 1.2.3 (commit 0123abc…, built 2026-12-01T20:00:00Z)"; a plain
// build says "committed <time>" instead when the go command stamped the VCS
// state, and "unknown" for what nobody set.
func versionLine() string {
	version, commit, date := Version, Commit, ""
	if BuildDate != "" {
		date = "built " + BuildDate
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		modified := false
		vcsCommit := ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsCommit = s.Value
			case "vcs.time":
				if date == "" {
					date = "committed " + s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if commit == "" && vcsCommit != "" {
			commit = vcsCommit
			if modified {
				commit += "+modified"
			}
		}
	}
	if version == "" {
		version = "dev"
	}
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "build date unknown"
	}
	return fmt.Sprintf("parley %s (commit %s, %s)", version, commit, date)
}
