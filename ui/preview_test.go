package ui

import (
	"encoding/json"
	"fmt"

	"parley/agentcore"
	"strings"
	"testing"

	"parley/agentcore/partialjson"
	"parley/components"
)

func kinds(ls []components.DiffLine) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Kind[:1])
	}
	return b.String()
}

func TestLiveDiffIsPositional(t *testing.T) {
	var p components.Preview
	liveDiff(&p, "a\nb\nc\n", "a\nB\nc\nd")
	if got := kinds(p.Diff); got != "cdaca" {
		t.Fatalf("kinds %s: %+v", got, p.Diff)
	}
	var long components.Preview
	liveDiff(&long, "", strings.Repeat("x\n", 40))
	if len(long.Diff) != liveDiffLines || long.DiffNote != "… 25 lines above" {
		t.Fatalf("long diff: %d lines, note %q", len(long.Diff), long.DiffNote)
	}
}

func TestUnifiedDiffHunks(t *testing.T) {
	var a, b strings.Builder
	for i := 1; i <= 30; i++ {
		line := "line " + strings.Repeat("·", i%3) + string(rune('a'+i%26))
		a.WriteString(line + "\n")
		switch i {
		case 5:
			b.WriteString("changed five\n")
		case 25:
		default:
			b.WriteString(line + "\n")
		}
	}
	diff, note := unifiedDiff(a.String(), b.String(), maxDiffLines)
	if note != "" {
		t.Fatalf("note %q", note)
	}
	// Two hunks: 3 context lines around each change.
	if got := kinds(diff); got != "hcccdaccchcccdccc" {
		t.Fatalf("kinds %s", got)
	}
	for _, l := range diff {
		if l.Kind == "del" && l.Text == "" {
			t.Fatal("empty deleted line")
		}
	}
	if d, note := unifiedDiff("same\n", "same\n", maxDiffLines); d != nil || note != "no changes" {
		t.Fatalf("no change: %v %q", d, note)
	}
}

// The write preview counts lines over the new bytes only and shows the
// tail: its cost does not grow with what was already written.
func TestWritingPreviewTail(t *testing.T) {
	st := &argParser{p: partialjson.New()}
	var p components.Preview
	content := ""
	for i := 0; i < 100; i++ {
		content += "fmt.Println(" + strings.Repeat("x", i%7) + ")\n"
		writing(&p, content, st)
	}
	if p.Lines != 100 || p.Above != 100-previewTail {
		t.Fatalf("lines %d, above %d", p.Lines, p.Above)
	}
	if strings.Count(p.Code, "Println") != previewTail {
		t.Fatalf("tail shows %d lines", strings.Count(p.Code, "Println"))
	}
}

// approvalCall is a write_file call suspended for approval, its payload
// carrying the file on disk as app/chat's gate reads it.
func approvalCall(t *testing.T, path, content string, file *fileOnDisk) *agentcore.ToolInvocation {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"path": path, "content": content})
	payload, _ := json.Marshal(map[string]any{"approval": true, "payload": map[string]any{"category": "edit", "file": file}})
	return &agentcore.ToolInvocation{State: "suspended", ToolCallID: "w1", ToolName: "write_file", Args: args, Approval: true, SuspendPayload: payload}
}

func numbered(n int, changed map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := changed[i]; ok {
			b.WriteString(s)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// An approval of write_file over an existing file shows the diff against
// the file on disk: the first lines at once, every line behind "Show all".
func TestApprovalWriteShowsDiff(t *testing.T) {
	before := numbered(80, nil)
	changed := map[int]string{40: "", 79: "line 79 changed\nextra\n"}
	for i := 2; i < 79; i += 8 {
		if i != 42 {
			changed[i] = fmt.Sprintf("LINE %d\n", i)
		}
	}
	after := numbered(80, changed)
	p := preview(approvalCall(t, "src/a.go", after, &fileOnDisk{Exists: true, Text: before, Size: int64(len(before))}), nil)
	all := append(append([]components.DiffLine{}, p.Diff...), p.More...)
	if len(p.Diff) != approvalShown || p.Total != len(all) || len(p.More) == 0 {
		t.Fatalf("shown %d, more %d, total %d", len(p.Diff), len(p.More), p.Total)
	}
	want, _ := unifiedDiff(before, after, maxApprovalLines)
	if kinds(all) != kinds(want) {
		t.Fatalf("kinds %s, want %s", kinds(all), kinds(want))
	}
	var dels, adds []string
	for _, l := range all {
		switch l.Kind {
		case "del":
			dels = append(dels, l.Text)
		case "add":
			adds = append(adds, l.Text)
		}
	}
	if strings.Join(dels, "|") != "line 2|line 10|line 18|line 26|line 34|line 40|line 50|line 58|line 66|line 74|line 79" ||
		strings.Join(adds, "|") != "LINE 2|LINE 10|LINE 18|LINE 26|LINE 34|LINE 50|LINE 58|LINE 66|LINE 74|line 79 changed|extra" {
		t.Fatalf("removed %q, added %q", dels, adds)
	}
	if p.DiffNote != "Replaces the file on disk: 11 lines added, 11 removed" || p.Code != "" {
		t.Fatalf("note %q, code %q", p.DiffNote, p.Code)
	}

	// A small change shows whole, with nothing to expand; one line is one line.
	small := preview(approvalCall(t, "a.txt", "one\nTWO\n", &fileOnDisk{Exists: true, Text: "one\ntwo\n"}), nil)
	if small.DiffNote != "Replaces the file on disk: 1 line added, 1 removed" {
		t.Errorf("note %q", small.DiffNote)
	}
	if kinds(small.Diff) != "cda" || small.More != nil {
		t.Fatalf("small: %s, more %d", kinds(small.Diff), len(small.More))
	}
	same := preview(approvalCall(t, "a.txt", "one\n", &fileOnDisk{Exists: true, Text: "one\n"}), nil)
	if same.Diff != nil || !strings.HasPrefix(same.DiffNote, "No changes") {
		t.Fatalf("same: %+v", same)
	}
}

// A new file shows its whole content as added lines; a huge one is cut at
// maxApprovalLines with a note; a file too big to compare says so; a
// refused path says the write will be refused.
func TestApprovalWriteBounds(t *testing.T) {
	p := preview(approvalCall(t, "new.txt", numbered(50, nil), &fileOnDisk{}), nil)
	if p.Total != 50 || len(p.Diff)+len(p.More) != 50 || p.More[len(p.More)-1].Text != "line 50" || p.DiffNote != "New file, 50 lines" {
		t.Fatalf("new file: total %d, note %q", p.Total, p.DiffNote)
	}
	huge := preview(approvalCall(t, "new.txt", numbered(maxApprovalLines+100, nil), &fileOnDisk{}), nil)
	if huge.Total != maxApprovalLines || huge.MoreNote == "" {
		t.Fatalf("huge: total %d, note %q", huge.Total, huge.MoreNote)
	}
	hugeDiff := preview(approvalCall(t, "a.txt", numbered(maxApprovalLines*2, map[int]string{1: "x\n"}), &fileOnDisk{Exists: true, Text: "y\n"}), nil)
	if hugeDiff.Total != maxApprovalLines || hugeDiff.MoreNote == "" {
		t.Fatalf("huge diff: total %d, note %q", hugeDiff.Total, hugeDiff.MoreNote)
	}
	big := preview(approvalCall(t, "big.txt", "a\nb\n", &fileOnDisk{Exists: true, Size: 3 << 20, Unshown: "too big"}), nil)
	if big.DiffNote != "The file on disk is 3.0 MB, too big to compare here: all of it is replaced by these 2 lines." || kinds(big.Diff) != "aa" {
		t.Fatalf("big: %q %s", big.DiffNote, kinds(big.Diff))
	}
	refused := preview(approvalCall(t, "../../etc/passwd", "root::0:0\n", &fileOnDisk{Unshown: `refused: path "../../etc/passwd" leaves the workspace root /w`}), nil)
	if !strings.Contains(refused.DiffNote, "will be refused") || refused.Diff != nil {
		t.Fatalf("refused: %+v", refused)
	}
	// Without an approval (YOLO) the card shows the written tail as before.
	free := approvalCall(t, "a.txt", "x\n", nil)
	free.Approval, free.SuspendPayload, free.State = false, nil, "call"
	if q := preview(free, nil); q.Diff != nil || q.Code == "" {
		t.Fatalf("unasked call: %+v", q)
	}
}
