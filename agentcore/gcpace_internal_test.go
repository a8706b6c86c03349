package agentcore

import (
	"runtime/debug"
	"testing"
)

// A GOGC the user set tighter, or off, is left as it is while a big reply
// streams.
func TestTightenKeepsTheUsersGOGC(t *testing.T) {
	for _, user := range []int{-1, 10, 100} {
		prev := debug.SetGCPercent(user)
		loosen := tightenGC()
		now := debug.SetGCPercent(7) // reads it
		debug.SetGCPercent(now)
		want := user
		if user == 100 {
			want = tightGCPercent
		}
		if now != want {
			t.Errorf("GOGC %d while tight over the user's %d, want %d", now, user, want)
		}
		loosen()
		if got := debug.SetGCPercent(prev); got != user {
			t.Errorf("GOGC %d after, want the user's %d", got, user)
		}
	}
}
