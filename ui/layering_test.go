package ui

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"parley/agentcore"
)

// Every method of the runtime's store interfaces, read or write. A method
// added to them later fails the test until it is sorted here, so a new
// write cannot slip past.
var (
	storeReads = []string{
		"GetThread", "ListThreads", "GetMessage", "ListMessages", "GetRun", "ListRuns",
		"GetSetting", "GetState", "Search", "ThreadUsage", "Close", "ListTree", "Siblings",
		"GetNotification", "FindCoalescable", "ListNotifications", "DueNotifications", "NextDue",
		"GetFile", "FileInfo",
	}
	storeWrites = []string{
		"CreateThread", "UpdateThread", "UpdateThreadMetadata", "DeleteThread", "TrashThread", "RestoreThread", "PurgeTrash",
		"AppendMessage", "UpdateMessage", "MarkMessage", "MoveMessages", "DeleteMessage",
		"CreateRun", "FinishRun", "SetSetting", "SetState", "ImportThreads",
		"CreateNotification", "SaveNotification", "SwitchBranch", "RewindTo", "ForkThread",
		"PutFile",
	}
)

// ui is HTTP only: it decodes, calls the runtime or the chat rules, and
// renders. It never writes the store nor publishes on the bus; every
// message, event and run is made by the runtime. A write of the store's
// name is allowed only as the runtime's own operation of that name
// (s.rt.CreateThread stores and publishes).
func TestUIHasNoStoreWritesNorPublishes(t *testing.T) {
	known := map[string]bool{}
	for _, n := range append(append([]string{}, storeReads...), storeWrites...) {
		known[n] = true
	}
	for _, it := range []reflect.Type{reflect.TypeFor[agentcore.Store](), reflect.TypeFor[agentcore.NotificationStore]()} {
		for i := range it.NumMethod() {
			if name := it.Method(i).Name; !known[name] {
				t.Errorf("%s.%s is neither a read nor a write here: sort it into storeReads or storeWrites", it.Name(), name)
			}
		}
	}
	for _, w := range storeWrites {
		_, inStore := reflect.TypeFor[agentcore.Store]().MethodByName(w)
		_, inNotes := reflect.TypeFor[agentcore.NotificationStore]().MethodByName(w)
		if !inStore && !inNotes {
			t.Errorf("%s is no method of agentcore's stores", w)
		}
	}
	rt := reflect.TypeFor[*agentcore.Runtime]()
	forbidden := []*regexp.Regexp{
		regexp.MustCompile(`\.Publish\(`),
		regexp.MustCompile(`\bagentcore\.(Store|Bus|NewBus|NewRuntimeOn)\b`),
		regexp.MustCompile(`\.(store|Store|bus|Bus)\.`),
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for i, line := range strings.Split(string(src), "\n") {
			for _, re := range forbidden {
				if re.MatchString(line) {
					t.Errorf("%s:%d: %s: ui neither holds the store or the bus nor publishes", f, i+1, strings.TrimSpace(line))
				}
			}
			for _, w := range storeWrites {
				for _, m := range regexp.MustCompile(`(\w+)\.`+w+`\(`).FindAllStringSubmatch(line, -1) {
					if _, own := rt.MethodByName(w); own && m[1] == "rt" {
						continue // the runtime's operation: it stores and publishes
					}
					t.Errorf("%s:%d: %s: a store write (%s) from ui; call the runtime or app/chat", f, i+1, strings.TrimSpace(line), w)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source of ui was read")
	}
}
