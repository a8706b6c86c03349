package storage

import (
	"runtime"
	"runtime/debug"
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
