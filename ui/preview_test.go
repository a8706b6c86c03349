package ui

import (
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
	diff, note := unifiedDiff(a.String(), b.String())
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
	if d, note := unifiedDiff("same\n", "same\n"); d != nil || note != "no changes" {
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
