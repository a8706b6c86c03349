package markdown

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Math joins the stream corpus: a formula split at every byte still ends as
// Render of the whole text (TestStreamEqualsRender).
func init() {
	streamCorpus["math inline"] = "Euler: $e^{i\\pi} + 1 = 0$ and $a_1 * b_2$, but $5 and $10 are prices.\n\nNext $x$.\n"
	streamCorpus["math display"] = "Sum:\n\n$$\n\\sum_{i=1}^n i = \\frac{n(n+1)}{2}\n$$\n\nand $$\\sqrt{2}$$\n\nafter\n"
	streamCorpus["math fence"] = "```math\n\\begin{pmatrix}a & b\\\\ c & d\\end{pmatrix}\n```\n\ntext\n"
	streamCorpus["math unclosed"] = "Then\n\n$$\n\\int_0^1 x\\,dx"
}

// mathCorpus is what models write most: each must become MathML, whole.
var mathCorpus = []string{
	`x^2`, `e^{i\pi} + 1 = 0`, `\frac{a}{b}`, `\sqrt{x^2+y^2}`, `\sqrt[3]{x}`,
	`\sum_{i=1}^n i = \frac{n(n+1)}{2}`, `\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt\pi}{2}`,
	`\prod_{k=1}^n k`, `\lim_{x\to 0}\frac{\sin x}{x} = 1`, `\binom{n}{k}`,
	`\begin{pmatrix}a & b\\ c & d\end{pmatrix}`, `\begin{bmatrix}1 & 0\\ 0 & 1\end{bmatrix}`,
	`\begin{cases}1 & x > 0\\ 0 & \text{otherwise}\end{cases}`, `\begin{aligned}a &= b\\ c &= d\end{aligned}`,
	`\mathbb{R}^n \mathcal{L} \mathbf{v} \mathrm{d}x`, `\alpha\beta\gamma\Delta\Omega`,
	`\left(\frac{a}{b}\right)`, `\hat{x}\bar{y}\vec{v}\tilde{n}\dot{a}`, `\overline{AB}`,
	`\nabla \cdot \mathbf{E} = \frac{\rho}{\varepsilon_0}`, `f'(x) = \lim_{h\to 0}\frac{f(x+h)-f(x)}{h}`,
	`\leq \geq \neq \approx \equiv \sim \in \notin \subset \cup \cap \infty`,
	`O(n \log n)`, `\operatorname{argmax}_x f(x)`, `\color{red}{x} + \cancel{y}`, `\boxed{E = mc^2}`,
	`P(A \mid B) = \frac{P(B \mid A)\,P(A)}{P(B)}`, `\underbrace{a+b}_{n}`, `x_{i,j}^{(k)}`,
}

// brokenCorpus must show as its source: bad TeX, unknown commands, and the
// commands an untrusted formula may not use.
var brokenCorpus = []string{
	`\frac{a}{`, `x^`, `\begin{pmatrix}a`, `\nosuchcommand{x}`, `}{`, `\left( x`,
	`\href{javascript:alert(1)}{x}`, `\url{https://example.com}`, `\style{color:red}{x}`,
	`\class{copy}{x}`, `\htmlId{main}{x}`, `\htmlData{a=b}{x}`, `\includegraphics{x.png}`,
	`\def\a{\a}\a`, strings.Repeat("{", 3000) + strings.Repeat("}", 3000), strings.Repeat("x+", texLimit),
}

func TestMathRendersCommonFormulas(t *testing.T) {
	for _, tex := range mathCorpus {
		for _, doc := range []string{"$" + tex + "$", "$$\n" + tex + "\n$$", "```math\n" + tex + "\n```"} {
			got, err := render(doc)
			if err != nil {
				t.Fatalf("%q: %v", doc, err)
			}
			if !strings.Contains(got, "<math") || strings.Contains(got, "math-error") {
				t.Errorf("%q did not become MathML:\n%s", doc, got)
				continue
			}
			// The sanitiser keeps every element Temml made.
			mathml, err := toMathML(tex, !strings.HasPrefix(doc, "$"+tex))
			if err != nil {
				t.Fatal(err)
			}
			if want, kept := elements(mathml), elements(got); kept != want {
				t.Errorf("%q: the sanitiser dropped elements: %d of %d left\nTemml: %s\nRender: %s", doc, kept, want, mathml, got)
			}
		}
	}
}

// elements counts the MathML elements in s.
func elements(s string) int {
	return len(regexp.MustCompile(`<m[a-z]*[ >]|<semantics|<annotation|<none`).FindAllString(s, -1))
}

func TestMathBadTeXShowsItsSource(t *testing.T) {
	for _, tex := range brokenCorpus {
		for _, doc := range []string{"see $" + tex + "$ here", "$$\n" + tex + "\n$$"} {
			got, err := render(doc)
			if err != nil {
				t.Fatalf("%q: %v", doc, err)
			}
			if strings.Contains(got, "<math") || !strings.Contains(got, `class="math-error" title="TeX error: `) {
				t.Errorf("%.80q rendered, want its source:\n%.400s", doc, got)
			}
			if short := strings.TrimSpace(tex); len(short) < 200 && !strings.Contains(got, htmlEscape(short)) {
				t.Errorf("%q: the source is not shown:\n%s", doc, got)
			}
		}
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// The TeX is the model's: nothing in it becomes markup, a link, a class the
// page uses or a style outside Temml's own.
func TestMathHostileTeX(t *testing.T) {
	for _, doc := range []string{
		`$\text{<img src=x onerror=alert(1)>}$`,
		`$\text{"><script>alert(1)</script>}$`,
		"$$\n\\text{</math><img src=x onerror=alert(1)>}\n$$",
		"```math\n\\mathrm{</annotation><script>alert(1)</script>}\n```",
		`$\href{javascript:alert(1)}{click}$`,
		`$\class{copy}{x}$ $\htmlStyle{position:fixed;inset:0}{x}$`,
		`$\unicode{60}script$`, `$\verb|<script>|$`,
	} {
		got, err := render(doc)
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		for _, n := range fragment(t, got) {
			checkMathTree(t, doc, n)
		}
	}
}

// checkMathTree fails on any element, attribute or value in n that a
// formula must not produce.
func checkMathTree(t *testing.T, doc string, n *html.Node) {
	t.Helper()
	if n.Type == html.ElementNode {
		if !slices.Contains(mathElements, n.Data) && !slices.Contains([]string{"p", "code", "pre", "div", "span", "img"}, n.Data) {
			t.Errorf("%q rendered a <%s>", doc, n.Data)
		}
		for _, a := range n.Attr {
			switch {
			case strings.HasPrefix(a.Key, "on"), a.Key == "href", a.Key == "src" && a.Val != "", a.Key == "id":
				t.Errorf("%q rendered <%s %s=%q>", doc, n.Data, a.Key, a.Val)
			case a.Key == "class" && strings.Contains(a.Val, "copy"):
				t.Errorf("%q borrowed the page's class %q", doc, a.Val)
			case a.Key == "style" && (strings.Contains(a.Val, "fixed") || strings.Contains(a.Val, "inset")):
				t.Errorf("%q rendered style %q", doc, a.Val)
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		checkMathTree(t, doc, c)
	}
}

func TestMathDollarsThatAreNotMath(t *testing.T) {
	for doc, want := range map[string]string{
		"It costs $5 and $10.":     "<p>It costs $5 and $10.</p>\n",
		"From $ 5 to $ 6":          "<p>From $ 5 to $ 6</p>\n",
		`An escaped \$x\$ stays.`:  "<p>An escaped $x$ stays.</p>\n",
		"Code `$x$` is code.":      "<p>Code <code>$x$</code> is code.</p>\n",
		"$$ alone\n":               "<p>$$ alone</p>\n",
		"Open $x without a close.": "<p>Open $x without a close.</p>\n",
		"$$\nnever closed\n\nnext": "<p>$$<br>\nnever closed</p>\n<p>next</p>\n",
	} {
		if got := Render(doc); got != want {
			t.Errorf("Render(%q):\n got %q\nwant %q", doc, got, want)
		}
	}
}

// The vendored Temml is the release TemmlVersion names, byte for byte
// (`make temml` checks the npm tarball's integrity and copies it).
func TestTemmlIsTheVendoredRelease(t *testing.T) {
	sum := sha256.Sum256([]byte(temmlJS))
	if got, want := hex.EncodeToString(sum[:]), temmlSHA256; got != want {
		t.Fatalf("temml/temml.min.js sha256 %s, want %s (Temml %s)", got, want, TemmlVersion)
	}
}

func BenchmarkMathFormula(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		// toMathML has no memo: each call converts.
		if _, err := toMathML(`\sum_{i=1}^{n} \frac{x_i^2}{\sqrt{y_i}} + \int_0^1 f(t)\,dt`, true); err != nil {
			b.Fatal(err)
		}
	}
}

// The sanitiser alone, as if the converter had been fooled: MathML with
// links, handlers, the page's classes and styles that escape the formula.
func TestMathPolicyHoldsWithoutTemml(t *testing.T) {
	got := pipelineOnce().policy.Sanitize(`<math display="block" href="javascript:alert(1)"><mi onclick="alert(1)" class="copy" style="position:fixed;inset:0;background:url(https://x.example/leak)">x</mi>` +
		`<maction actiontype="statusline"><mtext>a</mtext></maction><mtext><img src="https://x.example/leak"></mtext><mo style="color: red; width: expression(alert(1))" mathvariant="normal">+</mo></math>`)
	for _, n := range fragment(t, got) {
		checkMathTree(t, "sanitised", n)
	}
	for _, gone := range []string{"url(", "expression", "maction", "x.example", "javascript"} {
		if strings.Contains(got, gone) {
			t.Errorf("the policy let %q through:\n%s", gone, got)
		}
	}
	if !strings.Contains(got, `<mo style="color: red" mathvariant="normal">+</mo>`) {
		t.Errorf("the policy dropped what it should keep:\n%s", got)
	}
}
