// Package toolkit holds Parley's concrete tools, each one file: its
// input and output types, its model-facing description and its execute
// function.
//
// The workspace tools (view, find_files, search_content) reach the disk
// only through a Workspace, which confines every model-given path to one
// root directory: paths escaping it by "..", by an absolute path or through
// a symbolic link are refused, and so is anything inside a .git directory.
// Every read and every result is bounded (bytes per file, bytes per result,
// entries per walk) and walks stop when their context is cancelled.
//
// Mistakes the model can fix (a missing file, a bad pattern, an offset past
// the end) are returned as errors written for the model; agentcore hands
// them to it as error results.
package toolkit
