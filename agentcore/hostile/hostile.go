// Package hostile holds the values Parley's tests feed to every place an id
// or a name from outside enters (an imported file, a provider, an MCP
// server, the API): one list, so every surface is tried with the same ones.
package hostile

import "strings"

// IDs are ids and names an attacker would pick: each breaks out of a
// JavaScript string, an HTML attribute, a script element or a URL path if
// used unescaped, or is too long to be an id. A fresh slice each call, so a
// test may append to it.
func IDs() []string {
	return []string{
		`a');alert(1);('`, `a"b`, `a\b`, `</script><script>alert(1)</script>`, "a\u2028b",
		"a`b", "${alert(1)}", "a b", strings.Repeat("x", 10<<10),
	}
}
