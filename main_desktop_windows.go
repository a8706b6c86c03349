//go:build desktop

package main

// The Windows desktop app is started from the Start menu or a double click,
// with no arguments: it opens the window. (On Linux the .desktop file passes
// `desktop`.)
func init() { defaultArgs = []string{"desktop"} }
