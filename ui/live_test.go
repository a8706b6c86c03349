package ui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A page is given a long text a pace at a time, cut at a line end when
// one is near, never inside a character.
func TestPaced(t *testing.T) {
	const pace = paceMax
	short := "hello\nworld"
	if got, behind := paced(short, 0, pace); got != short || behind {
		t.Fatalf("short text: %q %v", got, behind)
	}
	lines := strings.Repeat("a line of text\n", 2000)
	got, behind := paced(lines, 100, pace)
	if !behind || len(got) > 100+pace || !strings.HasSuffix(got, "\n") || len(got) < pace/2 {
		t.Fatalf("lines: %d bytes, behind %v", len(got), behind)
	}
	runes := strings.Repeat("é", pace) // two bytes each, no line end
	for from := range 3 {
		got, behind := paced(runes, from*2, pace)
		if !behind || !utf8.ValidString(got) || len(got) > from*2+pace {
			t.Fatalf("from %d: %d bytes, valid %v", from*2, len(got), utf8.ValidString(got))
		}
	}
	if got, _ := paced("rewritten", 50, pace); got != "rewritten" {
		t.Fatalf("a text shorter than what was shown starts over: %q", got)
	}
}
