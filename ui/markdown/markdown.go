// Package markdown turns model and user text into HTML that is safe to put
// straight into the page.
//
// Contract:
//   - Input is GitHub-flavoured Markdown (tables, strikethrough, autolinks,
//     task lists) and may be cut off anywhere, because it is re-rendered on
//     every frame while a reply streams. An unclosed ``` fence renders as a
//     code block running to the end of the text.
//   - Raw HTML in the input is never interpreted: it comes out as escaped text.
//   - Links survive only with http, https or mailto URLs and always open in a
//     new tab with rel="nofollow noopener noreferrer".
//   - Images are never loaded: ![alt](url) renders as a link to url. Remote
//     images in model output are the classic exfiltration channel for prompt
//     injection (the URL carries the data and loads without a click).
//   - Math ($…$, $$…$$, ```math) becomes MathML on the server (math.go,
//     temml.go); TeX that cannot be converted shows as its escaped source.
//   - Code blocks are wrapped for a copy button (see [CodeCSS] for colours);
//     the page's own script handles clicks on .copy.
//   - Everything goldmark and chroma produce passes through a bluemonday
//     policy. Code bodies are sanitised on their own, so that finished blocks
//     can be cached while a reply streams, and spliced into the sanitised
//     document together with the copy buttons.
//
// Render is safe for concurrent use; the parser and policy are built once,
// on first use.
package markdown

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Render converts src to sanitised HTML. It never fails: should the renderer
// break on some input, the text comes back escaped in a paragraph, because a
// reply must stay readable while it streams.
func Render(src string) string {
	out, err := render(src)
	if err != nil {
		return "<p>" + html.EscapeString(src) + "</p>"
	}
	return out
}

// render is Render without the fallback, so tests and the fuzzer see failures.
func render(src string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("render markdown: panic: %v", p)
		}
	}()
	p := pipelineOnce()
	source := []byte(src)
	doc := p.md.Parser().Parse(text.NewReader(source))
	var buf bytes.Buffer
	buf.Grow(len(src) * 2)
	if err := p.md.Renderer().Render(&buf, source, doc); err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	return fillCodeBlocks(p.policy.Sanitize(buf.String()), codeBodies(doc, source, p.policy))
}

type pipeline struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

var pipelineOnce = sync.OnceValue(func() pipeline {
	return pipeline{md: newMarkdown(), policy: newPolicy()}
})

func newMarkdown() goldmark.Markdown {
	// The HTML block and inline raw-HTML parsers are left out, so "<b>" in the
	// input is plain text and gets escaped like any other text.
	var blocks, inlines []util.PrioritizedValue
	for _, v := range parser.DefaultBlockParsers() {
		if v.Value != parser.NewHTMLBlockParser() {
			blocks = append(blocks, v)
		}
	}
	for _, v := range parser.DefaultInlineParsers() {
		if v.Value != parser.NewRawHTMLParser() {
			inlines = append(inlines, v)
		}
	}
	// Math (math.go): $$ blocks before fenced code (700), $…$ after code
	// spans (100), so `$x$` stays code; ```math fences become math after parsing.
	blocks = append(blocks, util.Prioritized(blockMath{}, 650))
	inlines = append(inlines, util.Prioritized(inlineMath{}, 150))
	p := parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithASTTransformers(util.Prioritized(mathFences{}, 100)),
	)
	return goldmark.New(
		goldmark.WithParser(p),
		goldmark.WithExtensions(
			// GFM, with table alignment as an align attribute rather than
			// style="text-align:…", so the policy needs no CSS sanitising.
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough,
			extension.Linkify,
			extension.TaskList,
		),
		goldmark.WithRendererOptions(
			// Chat text is typed in a textarea: a newline means a line break.
			gmhtml.WithHardWraps(),
			// Ours replace the defaults for links, images and code (default
			// renderers sit at priority 1000; lower wins).
			renderer.WithNodeRenderers(util.Prioritized(nodeRenderer{}, 100)),
		),
	)
}

// nodeRenderer renders the nodes whose default HTML we need to change.
type nodeRenderer struct{}

func (nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindCodeBlock, renderCodeBlock)
	reg.Register(ast.KindFencedCodeBlock, renderCodeBlock)
	reg.Register(KindMath, renderMath)
	reg.Register(KindMathBlock, renderMathBlock)
}

// A link with a URL we would drop anyway renders as its text alone, rather
// than as an <a> without href.
func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if href, ok := linkURL(node.(*ast.Link).Destination); ok {
		writeAnchor(w, href, entering)
	}
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	href, ok := linkURL(n.Destination)
	if !ok {
		return ast.WalkContinue, nil
	}
	writeAnchor(w, href, entering)
	if entering && !n.HasChildren() {
		_, _ = w.Write(util.EscapeHTML(href)) // no alt text: show where it points
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.AutoLink)
	if !entering {
		return ast.WalkContinue, nil
	}
	dest, label := n.URL(src), util.EscapeHTML(n.Label(src))
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(dest), []byte("mailto:")) {
		dest = append([]byte("mailto:"), dest...)
	}
	href, ok := linkURL(dest)
	if ok {
		writeAnchor(w, href, true)
	}
	_, _ = w.Write(label)
	if ok {
		writeAnchor(w, href, false)
	}
	return ast.WalkContinue, nil
}

// writeAnchor writes the opening or closing tag of a link to href, which
// linkURL has already escaped.
func writeAnchor(w util.BufWriter, href []byte, open bool) {
	if !open {
		_, _ = w.WriteString("</a>")
		return
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(href))
	_, _ = w.WriteString(`" ` + linkAttrs + `>`)
}

// linkAttrs go on every link. Replies are read inside the app, so a link must
// never replace the app's page, and the destination learns nothing about it.
const linkAttrs = `rel="` + linkRel + `" target="_blank"`

// linkURL resolves entities in a link destination and percent-encodes it, as
// goldmark would, then accepts it only if it is an absolute http(s) URL with a
// host or a mailto URL. Relative URLs are refused: inside the app they would
// navigate away from the conversation. The sanitiser enforces this again.
func linkURL(dest []byte) ([]byte, bool) {
	href := util.URLEscape(dest, true)
	u, err := url.Parse(string(href))
	if err != nil {
		return nil, false
	}
	switch u.Scheme {
	case "http", "https":
		return href, u.Host != ""
	case "mailto":
		return href, true
	}
	return nil, false
}
