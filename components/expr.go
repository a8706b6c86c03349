package components

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Expr is the one way a value enters a Datastar expression. A Datastar
// attribute (data-on:*, data-init, data-show, …) is JavaScript that the page
// runs, so a value joined into it as text — an id from an imported file, a
// tool-call id from a provider, a file name — could end the string it was
// meant to sit in and run as code. tmpl must be a compile-time constant (the
// test TestExpressionsAreBuiltSafely holds every template and Go file to
// that); each %s in it is replaced by the next argument as a JavaScript
// literal:
//
//   - a string becomes a JSON string literal, with quotes, backslashes,
//     control characters, <, >, & and U+2028/U+2029 escaped, so nothing in it
//     can end the literal, the attribute or a surrounding script;
//   - a bool or an integer becomes its JSON literal.
//
// The result is then attribute-escaped by templ like any other value. A %s
// with no argument left becomes undefined (a bug the tests catch, not a hole).
func Expr(tmpl string, args ...any) string {
	var b strings.Builder
	b.Grow(len(tmpl) + 32*len(args))
	for {
		i := strings.Index(tmpl, "%s")
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		tmpl = tmpl[i+2:]
		if len(args) == 0 {
			b.WriteString("undefined")
			continue
		}
		b.WriteString(jsLiteral(args[0]))
		args = args[1:]
	}
}

// jsLiteral writes v as a JavaScript literal. Only the kinds a template needs
// are accepted; anything else becomes null rather than text.
func jsLiteral(v any) string {
	switch v.(type) {
	case string, bool, int, int64:
	default:
		return "null"
	}
	// json.Marshal escapes <, >, & and U+2028/U+2029, and replaces invalid
	// UTF-8 with U+FFFD: the literal is valid JavaScript on every engine.
	out, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(out)
}

// Signals is the value of a data-signals attribute: v as a JSON object,
// which Datastar parses as data, not as code.
func Signals(v map[string]any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(out)
}

// seg escapes one path segment of a URL Parley builds from an id, so an id
// can never add a segment ("../api/…") or a query to the path it sits in.
func seg(s string) string { return url.PathEscape(s) }
