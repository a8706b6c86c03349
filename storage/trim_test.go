package storage

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"parley/agentcore"
)

// What SQLite needed to write a big reply whole and to read it back is
// handed back to the system afterwards: the process is left with less
// than the reply's size more than before (it kept about three times it).
func TestBigReplyMemoryHandedBack(t *testing.T) {
	if _, ok := vmKiB(t, "VmRSS"); !ok || !libcTrims {
		t.Skip("no /proc, or no libc allocator to trim here")
	}
	if raceEnabled {
		// SQLite's allocator is Go code: under the race detector each
		// address it touches has shadow memory, resident for good, which
		// this test would count as kept. make test runs it without -race.
		t.Skip("measured without the race detector (make test runs it so)")
	}
	const size = 8 << 20
	db := openTest(t)
	th := mustThread(t, db, agentcore.Thread{})
	c := bigReply(size)
	m := mustAppend(t, db, agentcore.Message{ThreadID: th.ID, Role: agentcore.RoleAssistant, Content: agentcore.TextContent("x"), Status: agentcore.StatusStreaming})
	settled := func() int {
		runtime.GC()
		debug.FreeOSMemory()
		kib, _ := vmKiB(t, "VmRSS")
		return kib << 10
	}
	before := settled()
	if err := db.UpdateMessage(t.Context(), m.ID, c, agentcore.StatusComplete); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetMessage(t.Context(), m.ID); err != nil {
		t.Fatal(err)
	}
	if left := settled() - before; left > size {
		t.Errorf("writing and reading a reply of %d MiB left %d MiB resident", size>>20, left>>20)
	}
}

// trim_linux.go reaches libc's allocator and its lock by name: their
// types are checked only by the linker's name, not by the compiler. So the
// libc and memory modules must be the versions that file was checked
// against; an upgrade fails here until trim_linux.go is read against the
// new libc (libc_musl.go's allocator and allocatorMu) and this list is
// brought along.
func TestTrimLinknameVersions(t *testing.T) {
	if !libcTrims {
		t.Skip("trim_linux.go is not built here")
	}
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for path, v := range map[string]string{"modernc.org/libc": "v1.80.1", "modernc.org/memory": "v1.12.1"} {
		got := ""
		for _, line := range strings.Split(string(mod), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
				got = f[1]
			}
		}
		if got != v {
			t.Errorf("go.mod requires %s %q: trim_linux.go's go:linkname was checked against %s; read it again against the new version", path, got, v)
		}
	}
}
