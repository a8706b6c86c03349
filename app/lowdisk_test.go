package app

import (
	"log/slog"
	"strings"
	"testing"
)

func TestDiskWatch(t *testing.T) {
	dir := t.TempDir()
	low := &diskWatch{dir: dir, min: 1 << 62, log: slog.New(slog.DiscardHandler)}
	if w := low.Warning(); !strings.Contains(w, dir) || !strings.Contains(w, " is free on the disk") {
		t.Fatalf("below the threshold: %q, want the free space and the folder", w)
	}
	if roomy := (&diskWatch{dir: dir, min: 1, log: slog.New(slog.DiscardHandler)}); roomy.Warning() != "" {
		t.Fatal("a disk with room is warned of")
	}
	if gone := (&diskWatch{dir: dir + "/no/such", min: 1 << 62, log: slog.New(slog.DiscardHandler)}); gone.Warning() != "" {
		t.Fatal("a folder whose space cannot be read is warned of")
	}
	for n, want := range map[uint64]string{512: "512 bytes", 84 << 20: "84 MB", 3 << 29: "1.5 GB", 53 << 30: "53 GB", 2 << 10: "2 KB"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
