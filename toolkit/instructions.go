package toolkit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"unicode/utf8"
)

// Project instructions, as Claude Code and OpenCode read them: a file at
// the workspace root that tells the agent how this project works. Parley
// reads AGENTS.md, or CLAUDE.md when there is no AGENTS.md, on every run,
// so a change is in the next run.

// InstructionFiles are the names read, in order of preference.
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// MaxInstructionBytes bounds what of an instructions file the model is
// given; the rest is left out, and the model is told so.
const MaxInstructionBytes = 32 << 10

// ProjectInstructions is the instructions file of a workspace.
type ProjectInstructions struct {
	File      string // "AGENTS.md" or "CLAUDE.md"; "" when there is none
	Text      string // its text, cut at MaxInstructionBytes
	Truncated bool
	// Problem says why a file that is there is not used (not text, a link
	// out of the workspace, unreadable); Text is then empty.
	Problem string
}

// ReadProjectInstructions reads the workspace's instructions file through
// its resolver: a link that leads out of the workspace is not followed.
func ReadProjectInstructions(ctx context.Context, ws *Workspace) ProjectInstructions {
	for _, name := range InstructionFiles {
		abs, err := ws.Resolve(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return ProjectInstructions{File: name, Problem: err.Error()}
		}
		data, err := readPrefix(ctx, abs, MaxInstructionBytes+1)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return ProjectInstructions{File: name, Problem: "it could not be read: " + err.Error()}
		case isBinary(data):
			return ProjectInstructions{File: name, Problem: "it is not text"}
		}
		pi := ProjectInstructions{File: name}
		if len(data) > MaxInstructionBytes {
			n := MaxInstructionBytes
			for n > 0 && !utf8.RuneStart(data[n]) {
				n-- // not half a character
			}
			data, pi.Truncated = data[:n], true
		}
		if !utf8.Valid(data) {
			return ProjectInstructions{File: name, Problem: "it is not UTF-8 text"}
		}
		pi.Text = string(data)
		return pi
	}
	return ProjectInstructions{}
}

// SystemText is the instructions as the model is given them.
func (pi ProjectInstructions) SystemText() string {
	if pi.Text == "" {
		return ""
	}
	s := fmt.Sprintf("Instructions from %s at the root of the workspace (the project's own rules: follow them):\n\n%s", pi.File, pi.Text)
	if pi.Truncated {
		s += fmt.Sprintf("\n\n[The rest of %s is left out: it is longer than %d KiB.]", pi.File, MaxInstructionBytes>>10)
	}
	return s
}
