// Package toolkit holds Parley's concrete tools, each one file: its
// input and output types, its model-facing description and its execute
// function.
//
// The workspace tools — ReadOnly's view, find_files, search_content and
// Edit's write_file, edit_file, delete_file, mkdir, execute_command —
// reach the disk only through a Workspace, which confines every
// model-given path (execute_command's cwd included) to one root
// directory: paths escaping it by "..", by an absolute path or through a
// symbolic link are refused, and so is anything inside a .git directory.
// A tool opens only regular files (the root .gitignore too, resolved like
// any path): checked before the open and again, with fstat, after an open
// that cannot block, so a FIFO, a device or a link swapped in is refused,
// never waited on. Every read and every result is bounded (bytes per file,
// bytes per result, entries per walk), and every tool returns soon after
// its context is cancelled: walks stop, a read that hangs is left behind,
// and a command's process group is killed and its output closed within
// cancelWaitDelay. Writes
// are atomic; a changed file's before and after texts go to the UI for its
// diff, while the model is told only what changed.
//
// Mistakes the model can fix (a missing file, a bad pattern, an offset past
// the end) are returned as errors written for the model; agentcore hands
// them to it as error results.
package toolkit
