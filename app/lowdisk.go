package app

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"parley/storage"
)

const (
	// DefaultLowDisk is the free space on the data folder's disk below
	// which every screen warns: replies may soon fail to save.
	DefaultLowDisk = 100 << 20
	// diskCheck is how often the free space is looked at again.
	diskCheck = 30 * time.Second
)

// diskWatch tells when the disk that holds the data folder runs low.
type diskWatch struct {
	dir string
	min uint64
	log *slog.Logger

	mu      sync.Mutex
	checked time.Time
	warning string
	logged  bool
}

// Warning is what to tell the user while the disk is low, "" when it is
// not (or its space cannot be read); the space is read at most every
// diskCheck.
func (d *diskWatch) Warning() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checked.IsZero() && time.Since(d.checked) < diskCheck {
		return d.warning
	}
	d.checked = time.Now()
	free, err := storage.FreeBytes(d.dir)
	if err != nil || free >= d.min {
		d.warning = ""
		return ""
	}
	d.warning = fmt.Sprintf("Only %s is free on the disk that holds Parley's data (%s): new replies may not be saved. Free some space there.",
		sizeText(free), d.dir)
	if !d.logged {
		d.log.Warn("the data folder's disk is nearly full", "dir", d.dir, "free", free)
		d.logged = true
	}
	return d.warning
}

// sizeText is n bytes for people: "84 MB", "512 KB".
func sizeText(n uint64) string {
	switch {
	case n >= 10<<30:
		return fmt.Sprintf("%d GB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
