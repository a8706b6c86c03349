package markdown

import (
	"regexp"
	"slices"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/microcosm-cc/bluemonday"
)

// newPolicy is bluemonday's UGC policy fitted to what the renderer emits:
// no relative URLs, plus the link, checkbox and code-block attributes. It is
// the second line of defence: the renderer already escapes raw HTML
// and drops unsafe links, but nothing leaves the package without this pass.
func newPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()

	// Links: absolute http(s) and mailto only, with the attributes
	// writeAnchor sets; bluemonday adds nofollow/noreferrer/noopener itself
	// should they ever be missing.
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("rel").Matching(exactly(linkRel)).OnElements("a")
	p.AllowAttrs("target").Matching(exactly("_blank")).OnElements("a")

	// The renderer never emits <img> (see the package doc). UGC would still
	// pass one with an http(s) src; bluemonday cannot take an element back.

	// A list the model continues after a code block starts at its number.
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")

	// Task list checkboxes, display only.
	p.AllowAttrs("type").Matching(exactly("checkbox")).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")

	// Code blocks: the wrapper, the language class and chroma's token classes.
	p.AllowAttrs("class").Matching(exactly("code", "code-bar")).OnElements("div")
	p.AllowAttrs("class").Matching(exactly("chroma")).OnElements("pre")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[A-Za-z0-9_+#.-]{1,32}$`)).OnElements("code")
	p.AllowAttrs("class").Matching(exactly(append(chromaClasses(), "code-lang")...)).OnElements("span")
	return p
}

const linkRel = "nofollow noopener noreferrer"

// chromaClasses lists every class chroma's HTML formatter can put on a token.
func chromaClasses() []string {
	var cs []string
	for _, c := range chroma.StandardTypes {
		if c != "" {
			cs = append(cs, c)
		}
	}
	slices.Sort(cs)
	return slices.Compact(cs)
}

// exactly matches any one of the given strings and nothing else.
func exactly(ss ...string) *regexp.Regexp {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile(`^(?:` + strings.Join(q, "|") + `)$`)
}
