// Command parley is a local-first chat app for working with an AI agent:
// `parley serve` for the browser, `parley desktop` for a window.
package main

import (
	_ "embed"
	"os"

	"parley/app"
)

//go:embed build/appicon.png
var appIcon []byte

// defaultArgs is the command line when there is none (the Windows desktop
// app sets it); empty, parley prints its usage.
var defaultArgs []string

func main() {
	app.Icon = appIcon
	args := os.Args[1:]
	if len(args) == 0 {
		args = defaultArgs
	}
	os.Exit(app.Main(args, os.Stdout, os.Stderr))
}
