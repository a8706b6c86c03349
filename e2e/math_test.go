package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"parley/agentcore/scripted"
)

// mathReply is math as models write it: inline, display, a fence, a price
// that is not math, TeX that does not parse and TeX that tries markup.
const mathReply = "Euler's identity is $e^{i\\pi} + 1 = 0$, and the mean is $\\bar{x} = \\frac{1}{n}\\sum_i x_i$.\n\n" +
	"$$\n\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}\n$$\n\n" +
	"```math\n\\begin{pmatrix}a & b\\\\ c & d\\end{pmatrix}^{-1} = \\frac{1}{ad-bc}\\begin{pmatrix}d & -b\\\\ -c & a\\end{pmatrix}\n```\n\n" +
	"A wide one:\n\n$$\n" + "\\sum_{k=1}^{n} " + "(a_k + b_k + c_k + d_k + e_k + f_k + g_k) + " + "\\prod_{j=1}^{m} (x_j + y_j + z_j + w_j + u_j + v_j) = " + "\\lim_{t\\to\\infty} \\frac{F(t)}{G(t)} + \\frac{H(t)}{K(t)} + \\frac{L(t)}{M(t)}\n$$\n\n" +
	"It costs $5 and $10. Broken: $\\frac{a}{$ and $\\text{<img src=x onerror=alert(1)>}$ end.\n"

// Math in a reply is MathML the browser lays out: fractions stand taller
// than a letter, a display formula wider than a phone scrolls on its own,
// TeX that does not parse shows as its source, and markup in TeX is text.
// Streamed and reloaded, the reply is the same.
func TestMathRendersAsMathML(t *testing.T) {
	p := startParley(t)
	id := p.newThread()
	p.Model.Push(scripted.Reply{Text: mathReply, ChunkSize: 7, Delay: time.Millisecond})
	pg := p.page("/t/" + id)
	pg.MustElement("#draft").MustInput("show me some math")
	pg.Keyboard.MustType(input.Enter)
	waitJS(t, pg, `() => document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)

	check := func(when string) {
		t.Helper()
		const body = `document.querySelector('#messages .msg-assistant .msg-body')`
		got := pg.MustEval(`() => {
			const b = ` + body + `;
			const maths = [...b.querySelectorAll('math')];
			const frac = b.querySelector('mfrac'), letter = b.querySelector('mi');
			return {
				maths: maths.length,
				mathml: maths.every(m => m.namespaceURI === 'http://www.w3.org/1998/Math/MathML'),
				displays: b.querySelectorAll('.math-display > math[display=block]').length,
				fracTaller: frac.getBoundingClientRect().height > 1.3 * letter.getBoundingClientRect().height,
				errors: [...b.querySelectorAll('.math-error')].map(e => e.textContent),
				imgs: b.querySelectorAll('img').length,
				text: b.textContent,
			};
		}`)
		if n := got.Get("maths").Int(); n != 6 {
			t.Fatalf("%s: %d formulas on the page, want 6 (2 inline, 3 display, the <img> one as text)", when, n)
		}
		if !got.Get("mathml").Bool() || got.Get("displays").Int() != 3 {
			t.Fatalf("%s: formulas are not MathML in display blocks: %s", when, got)
		}
		if !got.Get("fracTaller").Bool() {
			t.Fatalf("%s: a fraction is no taller than a letter: the browser did not lay the MathML out", when)
		}
		if errs := got.Get("errors").Arr(); len(errs) != 1 || errs[0].Str() != `$\frac{a}{$` {
			t.Fatalf("%s: bad TeX shows as %v, want its source", when, errs)
		}
		text := got.Get("text").Str()
		if got.Get("imgs").Int() != 0 || !strings.Contains(text, "<img src=x onerror=alert(1)>") || !strings.Contains(text, "It costs $5 and $10.") {
			t.Fatalf("%s: markup in TeX or the prices did not stay text: %q", when, text)
		}
	}
	check("streamed")
	streamed := evalString(pg, bodyHTML)
	pg.MustScreenshot(artifact("math-1280.png"))

	pg.MustReload().MustWaitLoad()
	waitJS(t, pg, `() => document.readyState === 'complete' && document.querySelector('#messages .msg-assistant[data-status=complete]') !== null`)
	check("reloaded")
	if reloaded := evalString(pg, bodyHTML); reloaded != streamed {
		t.Fatalf("the streamed reply differs from the reloaded one:\nstreamed %s\nreloaded %s", streamed, reloaded)
	}

	// A phone: the wide formula scrolls inside its block, the page does not.
	pg.MustSetViewport(390, 844, 1, true)
	waitJS(t, pg, `() => window.innerWidth === 390`)
	wide := pg.MustEval(`() => {
		const d = [...document.querySelectorAll('#messages .math-display')].at(-1);
		return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, block: d.scrollWidth - d.clientWidth };
	}`)
	if wide.Get("page").Int() > 0 || wide.Get("block").Int() <= 0 {
		t.Fatalf("at 390 px the wide formula should scroll in its block, not the page: %s", wide)
	}
	pg.MustScreenshot(artifact("math-390.png"))

	// Formulas and their errors pass axe, light and dark, at every width.
	a := newAuditor(t)
	a.screen(pg, "math", "")
	if len(a.failed) > 0 {
		t.Fatalf("accessibility violations:\n%s", strings.Join(a.failed, "\n"))
	}
}
