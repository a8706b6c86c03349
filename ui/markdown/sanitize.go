package markdown

import (
	"net/url"
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
	// pass one with an http(s) src, and bluemonday cannot take an element
	// back, so any src is emptied: nothing loads.
	p.RewriteSrc(func(u *url.URL) { *u = url.URL{} })

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

	allowMathML(p)
	return p
}

// mathElements are the MathML layout elements Temml emits: no links, no
// actions, nothing that loads or runs anything.
var mathElements = []string{
	"math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext",
	"mspace", "msub", "msup", "msubsup", "munder", "mover", "munderover",
	"mmultiscripts", "mprescripts", "none", "mfrac", "msqrt", "mroot",
	"mtable", "mtr", "mtd", "mlabeledtr", "mstyle", "mpadded", "mphantom",
	"menclose", "merror",
}

// allowMathML lets Temml's MathML (temml.go) through: its elements, their
// presentation attributes and the few inline styles it sets, each with a
// value that cannot name a URL or leave the declaration, and its own
// class names only, so a formula cannot borrow the page's. Math's
// wrappers: a display block and, for TeX that would not convert, its
// source as code with the reason as a tooltip.
func allowMathML(p *bluemonday.Policy) {
	p.AllowNoAttrs().OnElements(mathElements...)
	value := regexp.MustCompile(`^[-#.%0-9A-Za-z ]{1,64}$`)
	p.AllowAttrs(
		"display", "displaystyle", "scriptlevel", "mathvariant", "mathsize",
		"mathcolor", "mathbackground", "stretchy", "fence", "separator", "form",
		"lspace", "rspace", "minsize", "maxsize", "movablelimits", "symmetric",
		"largeop", "accent", "accentunder", "linethickness", "width", "height",
		"depth", "voffset", "notation", "columnalign", "rowalign",
		"columnspacing", "rowspacing", "columnlines", "rowlines", "frame",
		"framespacing", "columnspan", "rowspan",
	).Matching(value).OnElements(mathElements...)
	p.AllowAttrs("encoding").Matching(exactly("application/x-tex")).OnElements("annotation")
	temmlClass := `(?:(?:tml|wbk|chr|ff)-[a-z0-9-]{1,24}|mathcal|mathscr|menclose|upstrike|downstrike|sout|actuarial|longdiv-top|longdiv-arc|phasor-bottom|phasor-angle|circle-pad|textcircle|special-fraction)`
	classes := regexp.MustCompile(`^` + temmlClass + `(?: ` + temmlClass + `){0,7}$`)
	p.AllowAttrs("class").Matching(classes).OnElements(append(mathElements, "span")...)

	// Each property Temml sets, with the values it gives it.
	length := `-?[0-9.]{1,12}(?:em|ex|pt|px|%|mu)?`
	lengths := regexp.MustCompile(`^` + length + `(?: ` + length + `){0,3}$`)
	color := `#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,24}`
	onMath := append(mathElements, "span")
	p.AllowStyles("color").Matching(regexp.MustCompile(`^(?:` + color + `)$`)).OnElements(onMath...)
	p.AllowStyles("width", "height", "padding", "padding-left", "padding-right", "margin-left", "left", "right", "bottom").
		Matching(lengths).OnElements(onMath...)
	p.AllowStyles("border", "border-bottom", "border-right").
		Matching(regexp.MustCompile(`^` + length + ` solid(?: (?:` + color + `))?$`)).OnElements(onMath...)
	p.AllowStyles("position").Matching(exactly("relative", "absolute")).OnElements(onMath...)
	p.AllowStyles("display").Matching(exactly("block math", "block", "flex", "inline-block")).OnElements(onMath...)
	p.AllowStyles("justify-content").Matching(exactly("center")).OnElements(onMath...)
	p.AllowStyles("text-align").Matching(exactly("left", "right", "center")).OnElements(onMath...)
	p.AllowStyles("math-depth").Matching(regexp.MustCompile(`^[0-9]$`)).OnElements(onMath...)

	p.AllowAttrs("class").Matching(exactly("math-display")).OnElements("div")
	p.AllowAttrs("tabindex").Matching(exactly("0")).OnElements("div")
	p.AllowAttrs("class").Matching(exactly("math-error")).OnElements("code", "pre")
	p.AllowAttrs("title").OnElements("code", "pre")
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
