package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// lockFile is the data folder's lock: one Parley per data folder. Two
// processes on one database would each take the other's live replies for
// leftovers of a crash (and mark them interrupted), and run replies on the
// same chat at once. The lock is an OS lock on the open file (flock,
// LockFileEx), so the kernel drops it when the process ends however it
// ends: a file left behind by a killed Parley blocks nothing. The file
// also records who holds it (lockRecord), for the refusal to name.
const lockFile = "parley.lock"

// lockAddressWait bounds how long a second Parley waits for the first to
// record its address: the first records it as soon as it listens, a moment
// after taking the lock.
const lockAddressWait = 3 * time.Second

// lockPoll is how often the second Parley looks again meanwhile.
const lockPoll = 50 * time.Millisecond

// lockRecord is what parley.lock holds while a Parley runs.
type lockRecord struct {
	PID int    `json:"pid"`
	URL string `json:"url,omitempty"` // the address the server is bound to; never a token
}

// RunningError is the refusal to start on a data folder another Parley
// holds. URL is "" when that Parley had recorded no address (yet), PID 0
// when its record could not be read.
type RunningError struct {
	URL string
	PID int
}

func (e *RunningError) Error() string {
	msg := "Parley is already running on this data folder"
	if e.URL != "" {
		msg += " at " + e.URL
	}
	if e.PID > 0 {
		msg += fmt.Sprintf(" (pid %d)", e.PID)
	}
	return msg
}

// dataLock is a held data-folder lock. Its methods are safe on nil.
type dataLock struct {
	f        *os.File
	mu       sync.Mutex
	released bool
}

// lockDataDir takes dir's lock, or returns a *RunningError naming the
// Parley that holds it. It creates dir if needed.
func lockDataDir(dir string) (*dataLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the data folder %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the data folder's lock %s: %w", path, err)
	}
	deadline := time.Now().Add(lockAddressWait)
	for {
		held, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the data folder (%s): %w", path, err)
		}
		if held {
			l := &dataLock{f: f}
			if err := l.write(lockRecord{PID: os.Getpid()}); err != nil {
				l.release()
				return nil, err
			}
			return l, nil
		}
		// Another Parley holds it: name it, once it has said where it is.
		rec, _ := readLockRecord(f)
		if rec.URL != "" || !time.Now().Before(deadline) {
			f.Close()
			return nil, &RunningError{URL: rec.URL, PID: rec.PID}
		}
		time.Sleep(lockPoll)
	}
}

// readLockRecord reads the holder's record through f; a record being
// rewritten reads as an error.
func readLockRecord(f *os.File) (lockRecord, error) {
	var rec lockRecord
	raw := make([]byte, 4096)
	n, err := f.ReadAt(raw, 0)
	if err != nil && n == 0 {
		return rec, err
	}
	err = json.Unmarshal(raw[:n], &rec)
	return rec, err
}

// setURL records the address the server listens on: the bound URL it
// prints, stripped of anything but scheme and host, so no token is ever
// written here.
func (l *dataLock) setURL(raw string) error {
	if l == nil {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("record the server's address %q in the data folder's lock: not a URL", raw)
	}
	return l.write(lockRecord{PID: os.Getpid(), URL: u.Scheme + "://" + u.Host})
}

func (l *dataLock) write(rec lockRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	raw, _ := json.Marshal(rec)
	// In place: the lock belongs to this open file, so the file is never
	// replaced. A reader may see a half-written record; it reads again.
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("write the data folder's lock: %w", err)
	}
	if _, err := l.f.WriteAt(append(raw, '\n'), 0); err != nil {
		return fmt.Errorf("write the data folder's lock: %w", err)
	}
	return nil
}

// release empties the record and lets the lock go. The file stays: removing
// it would let two later Parleys lock two different files of one name.
func (l *dataLock) release() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return
	}
	l.released = true
	_ = l.f.Truncate(0)
	_ = unlockFile(l.f)
	_ = l.f.Close()
}

// openLocked wires an instance that owns lock from now on: Close releases
// it, and so does a failure here.
func openLocked(ctx context.Context, c Config, o Options, lock *dataLock) (*Instance, error) {
	in, err := open(ctx, c, o)
	if err != nil {
		lock.release()
		return nil, err
	}
	in.lock = lock
	return in, nil
}

// runningLoginURL is the login link of the Parley that holds dataDir's lock:
// its address with the token its data folder keeps (a desktop app's own,
// published in desktop.json, when that is the one running).
func runningLoginURL(dataDir string, running *RunningError) (string, error) {
	if running.URL == "" {
		return "", errors.New("the running Parley has not recorded its address")
	}
	// Every Parley on a folder answers to the folder's token.
	token, err := readToken(TokenPath(dataDir))
	if err != nil {
		return "", fmt.Errorf("read the running Parley's token: %w", err)
	}
	return running.URL + "/?token=" + url.QueryEscape(token), nil
}
