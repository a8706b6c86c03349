// Command parley is a local-first chat app for working with an AI agent:
// `parley serve` for the browser, `parley desktop` for a window.
package main

import (
	"os"

	"parley/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Stdout, os.Stderr))
}
