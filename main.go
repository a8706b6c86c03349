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

func main() {
	app.Icon = appIcon
	os.Exit(app.Main(os.Args[1:], os.Stdout, os.Stderr))
}
