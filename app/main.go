// Package app is Parley's composition root: it reads the command line and
// the environment, opens the data file, wires storage, the agent runtime and
// the UI together, and runs web mode, the desktop window or the CLI.
package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Icon is the app icon as PNG, for the desktop window; package main sets it
// from build/appicon.png (the file Wails packaging uses too).
var Icon []byte

const usage = `Parley — a local-first chat app for working with an AI agent.

Usage:
  parley serve   [--addr 127.0.0.1:7777] [--data DIR] [--workspace DIR] [--model provider/model] [--demo] [--token T]
  parley desktop [--data DIR] [--workspace DIR] [--model provider/model] [--demo]
  parley api tool list|get <id>|execute <id> '<json>' [--url URL] [--token T] [--schema]
  parley token   [--data DIR]    print the token every request needs (kept in DIR/token)
  parley backup  [--data DIR] [--to FILE]   copy the database, safely, even while Parley runs
  parley restore [--data DIR] FILE          put a backup back (Parley must not be running)
  parley version

Environment: PARLEY_DATA_DIR, PARLEY_MODEL, PARLEY_TOKEN, and the providers'
keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY, OPENROUTER_API_KEY, …).
`

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(args[1:], stdout, stderr)
	case "api":
		// Its own output: JSON on stdout, a JSON error on stderr.
		return apiCmd(args[1:], os.Getenv, stdout, stderr)
	case "desktop":
		err = desktopCmd(args[1:], stdout, stderr)
	case "token":
		err = tokenCmd(args[1:], stdout, stderr)
	case "backup":
		err = backupCmd(args[1:], stdout, stderr)
	case "restore":
		err = restoreCmd(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, versionLine())
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "parley: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "parley: %v\n", err)
		return 1
	}
	return 0
}
