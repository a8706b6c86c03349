package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"parley/toolkit"
)

// approvalFileBytes caps the file on disk an approval carries for its diff:
// past 256 KiB a file is not one a person reviews line by line in a card,
// and the approval is stored with the thread.
const approvalFileBytes = 256 << 10

// FileOnDisk is what a write_file approval replaces, as it is when the
// user is asked: the approval shows the diff against it. Text is empty when
// the file does not exist or Unshown says why it is not carried.
type FileOnDisk struct {
	Exists  bool   `json:"exists"`
	Text    string `json:"text,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Unshown string `json:"unshown,omitempty"` // "too big", "binary", "not a regular file", "refused: …"
}

// fileOnDisk reads the file a write_file call would replace, through the
// workspace's resolver only: a path that leaves the workspace (by ../, an
// absolute path or a symbolic link) or enters .git is never read, and the
// approval says the write will be refused.
func fileOnDisk(root string, input json.RawMessage) *FileOnDisk {
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(input, &in) != nil || root == "" {
		return nil
	}
	ws, err := toolkit.NewWorkspace(root)
	if err != nil {
		return nil
	}
	abs, err := ws.Resolve(in.Path)
	if err != nil {
		return &FileOnDisk{Unshown: "refused: " + err.Error()}
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &FileOnDisk{}
	case err != nil:
		return &FileOnDisk{Exists: true, Unshown: "unreadable: " + err.Error()}
	case !fi.Mode().IsRegular():
		return &FileOnDisk{Exists: true, Unshown: "not a regular file"}
	case fi.Size() > approvalFileBytes:
		return &FileOnDisk{Exists: true, Size: fi.Size(), Unshown: "too big"}
	}
	text, err := readCapped(abs, approvalFileBytes)
	switch {
	case err != nil:
		return &FileOnDisk{Exists: true, Size: fi.Size(), Unshown: "unreadable: " + err.Error()}
	case len(text) > approvalFileBytes:
		return &FileOnDisk{Exists: true, Size: int64(len(text)), Unshown: "too big"}
	case bytes.IndexByte(text, 0) >= 0:
		return &FileOnDisk{Exists: true, Size: int64(len(text)), Unshown: "binary"}
	}
	return &FileOnDisk{Exists: true, Text: string(text), Size: int64(len(text))}
}

// readCapped reads at most limit+1 bytes of abs, so a file that grew since
// it was measured is seen to be too big.
func readCapped(abs string, limit int64) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}
