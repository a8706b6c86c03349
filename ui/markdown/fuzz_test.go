package markdown

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// xssSeeds are classic filter-evasion strings (mostly from the OWASP XSS
// Filter Evasion Cheat Sheet) plus markdown-specific ones.
var xssSeeds = []string{
	`<IMG SRC="javascript:alert('XSS');">`,
	`<IMG SRC=JaVaScRiPt:alert('XSS')>`,
	`<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>`,
	`<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>`,
	`<IMG """><SCRIPT>alert("XSS")</SCRIPT>">`,
	`<SCRIPT/XSS SRC="http://x/xss.js"></SCRIPT>`,
	"<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert(\"XSS\")>",
	`<<SCRIPT>alert("XSS");//<</SCRIPT>`,
	`<SCRIPT SRC=//xss.rocks/.j>`,
	`<IMG SRC="jav	ascript:alert('XSS');">`,
	`<IMG SRC=" &#14;  javascript:alert('XSS');">`,
	`<iframe src=http://xss.rocks/scriptlet.html <`,
	`<svg/onload=alert(1)>`,
	`<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
	`<a href="jav&#x09;ascript:alert(1)">x</a>`,
	`<a href="javascript&colon;alert(1)">x</a>`,
	`<iframe src=javascript:alert(1)>`,
	`<form><button formaction=javascript:alert(1)>x</button></form>`,
	`<div style="width: expression(alert('XSS'));">x</div>`,
	`<STYLE>li {list-style-image: url("javascript:alert('XSS')");}</STYLE><UL><LI>XSS</br>`,
	`<TABLE BACKGROUND="javascript:alert('XSS')">`,
	`<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<!--<script>alert(1)//-->`,
	`[x](javascript:alert(1))`,
	`[x](JaVaScRiPt:alert(1))`,
	`[x](jav&#x09;ascript:alert(1))`,
	`[x](&#106;avascript:alert(1))`,
	`[x](vbscript:msgbox(1))`,
	`[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
	`[x](<javascript:alert(1)>)`,
	"[x](\njavascript:alert(1))",
	`[a](https://x.y "t\" onmouseover=\"alert(1)")`,
	`[x]: javascript:alert(1)` + "\n\n[x]",
	`<javascript:alert(1)>`,
	`<https://x.y/"onmouseover="alert(1)>`,
	`www.example.com/"onmouseover=alert(1)`,
	`![x](x" onerror="alert(1))`,
	`![x](https://x/a.png"onerror="alert(1))`,
	`![x](data:text/html,<script>alert(1)</script>)`,
	`![<img src=x onerror=alert(1)>](https://x/a.png)`,
	"```\"><script>alert(1)</script>\ncode\n```",
	"```go onload=alert(1)\nx\n```",
	"```html\n<script>alert(1)</script>\n```",
	"- [x] <input onfocus=alert(1) autofocus>",
	"| a |\n|---|\n| <img src=x onerror=alert(1)> |",
	`<div class="code-bar"><span class="code-lang">`,
	"`<script>`",
	`$\text{<script>alert(1)</script>}$ and $$\mathrm{"><img src=x onerror=alert(1)>}$$`,
	"$$\n\\href{javascript:alert(1)}{x} \\url{javascript:alert(1)}\n$$",
	"```math\n</math><img src=x onerror=alert(1)>\n```",
	`$\style{background:url(javascript:alert(1))}{x}$ $\class{copy}{x}$ $\htmlId{draft}{x}$`,
}

func FuzzRender(f *testing.F) {
	for _, s := range xssSeeds {
		f.Add(s)
	}
	f.Add(benchReply)
	f.Fuzz(func(t *testing.T, src string) {
		out, err := render(src)
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, out)
	})
}

func TestXSSSeeds(t *testing.T) {
	for _, s := range xssSeeds {
		out, err := render(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		checkSafe(t, out)
	}
}

// renderedTags is everything Render may emit; anything else means the input
// reached the page as markup.
var renderedTags = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "li": true, "blockquote": true, "hr": true, "br": true,
	"em": true, "strong": true, "del": true, "code": true, "pre": true, "a": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"input": true, "div": true, "span": true, "button": true,
}

func init() {
	for _, m := range mathElements {
		renderedTags[m] = true
	}
}

// urlAttrs are attributes a browser may follow or evaluate as a URL.
var urlAttrs = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "xlink:href": true, "style": true,
}

// checkSafe fails t if out, read by a real HTML tokenizer, could run script.
func checkSafe(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Fatalf("output contains <script:\n%s", out)
	}
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("tokenize: %v", z.Err())
			}
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if !renderedTags[tok.Data] {
			t.Fatalf("unexpected <%s> in output:\n%s", tok.Data, out)
		}
		for _, a := range tok.Attr {
			key := strings.ToLower(a.Key)
			if strings.HasPrefix(key, "on") {
				t.Fatalf("event handler attribute %s on <%s>:\n%s", a.Key, tok.Data, out)
			}
			if urlAttrs[key] && (dangerousURL(a.Val) || strings.Contains(strings.ToLower(a.Val), "url(")) {
				t.Fatalf("dangerous %s=%q on <%s>:\n%s", a.Key, a.Val, tok.Data, out)
			}
		}
	}
}

// dangerousURL reports whether v, read the way a browser reads a URL (entities
// already decoded by the tokenizer, tabs, newlines and other controls
// ignored, any case), uses a script-capable scheme or CSS expression.
func dangerousURL(v string) bool {
	v = strings.Map(func(r rune) rune {
		if r <= ' ' {
			return -1
		}
		return r
	}, strings.ToLower(v))
	for _, bad := range []string{"javascript:", "vbscript:", "data:text/html", "expression("} {
		if strings.Contains(v, bad) {
			return true
		}
	}
	return false
}
