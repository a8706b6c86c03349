package components

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a-h/templ"
	tparser "github.com/a-h/templ/parser/v2"
	"github.com/a-h/templ/parser/v2/visitor"
	"golang.org/x/net/html"
)

// hostile are values that broke out of hand-joined expressions, or would.
var hostile = []string{
	`');fetch('/api/tools/execute_command/execute',{method:'POST'});('`,
	`"); alert(1); ("`,
	`\`, `\\'`, `\u0027`,
	`</script><script>alert(1)</script>`,
	"line\u2028sep\u2029para",
	"`${alert(1)}`",
	"${window.__pwned=1}",
	"a'b\"c`d\\e",
	"\x00\x01\x1f\x7f",
	"&amp; &#39; &quot;",
	"../../api/tools/execute_command/execute",
	"emoji 👍 and \U0010FFFF",
	"",
}

func TestExprKeepsEveryValueInsideItsLiteral(t *testing.T) {
	for _, v := range hostile {
		got := Expr("@post(%s, {payload: {x: %s}})", v, true)
		want := "@post(" + mustJSON(t, v) + ", {payload: {x: true}})"
		if got != want {
			t.Errorf("Expr(%q) = %s, want %s", v, got, want)
		}
		// Inside a double-quoted literal ' and ` are plain characters; these
		// would end a script or, on old engines, the literal.
		for _, bad := range []string{"</", "\u2028", "\u2029"} {
			if strings.Contains(got, bad) {
				t.Errorf("Expr(%q) leaves %q raw: %s", v, bad, got)
			}
		}
		if back := roundTrip(t, "f(%s)", v); back != v {
			t.Errorf("round trip of %q gave %q", v, back)
		}
	}
	if got := Expr("f(%s, %s)", 7, false); got != "f(7, false)" {
		t.Errorf("numbers and bools: %s", got)
	}
	if got := Expr("f(%s)", struct{}{}); got != "f(null)" {
		t.Errorf("an unsupported kind must become null, got %s", got)
	}
	if got := Expr("f(%s, %s)", "a"); got != `f("a", undefined)` {
		t.Errorf("a missing argument must become undefined, got %s", got)
	}
}

// FuzzExpr: for any input the value the page reads back is the input. The
// expression goes through templ's attribute escaping and the HTML parser as
// in a page; the literal it holds is then read as JSON, a subset of
// JavaScript's string literals with the same meaning (ES2019).
// e2e/hostile_test.go checks the same values in Chromium itself.
func FuzzExpr(f *testing.F) {
	for _, v := range hostile {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			v = strings.ToValidUTF8(v, "\uFFFD")
		}
		if back := roundTrip(t, "@post('/x', {payload: {v: %s}})", v); back != v {
			t.Fatalf("%q came back as %q", v, back)
		}
	})
}

// roundTrip puts v in an attribute through Expr, as templ renders it, parses
// the HTML and returns the value of the literal the browser would see.
func roundTrip(t testing.TB, tmpl, v string) string {
	t.Helper()
	expr := Expr(tmpl, v)
	page := `<button data-on:click="` + templ.EscapeString(expr) + `">x</button>`
	z := html.NewTokenizer(strings.NewReader(page))
	var attr string
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		if tt == html.StartTagToken {
			for _, a := range z.Token().Attr {
				attr = a.Val
			}
			break
		}
	}
	if attr != expr {
		t.Fatalf("the attribute reads %q, not the expression %q", attr, expr)
	}
	i := strings.Index(tmpl, "%s")
	rest := tmpl[i+2:]
	lit := strings.TrimSuffix(attr[i:], rest)
	var back string
	if err := json.Unmarshal([]byte(lit), &back); err != nil {
		t.Fatalf("%q is not one literal: %v", lit, err)
	}
	return back
}

func mustJSON(t *testing.T, v string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dsAttr are the attributes Datastar evaluates as JavaScript.
var dsAttr = regexp.MustCompile(`^data-(on|init|attr|effect|show|text|class|signals|computed|style|indicator|bind|ref|json-signals)([:_.-]|$)`)

// marker is a string that reads as Datastar code: an action, a signal, the
// element or event.
var marker = regexp.MustCompile(`@(get|post|put|patch|delete)\(|\$[A-Za-z_]|\bel\.|\bevt\.`)

// TestExpressionsAreBuiltSafely holds every template and every Go file of
// the page side to the rule: a Datastar expression is a constant, or Expr
// with a constant template (Signals for data-signals). Nothing joins a value
// into one, so a quote in an id can never run as code.
func TestExpressionsAreBuiltSafely(t *testing.T) {
	var problems []string
	templs, _ := filepath.Glob("*.templ")
	if len(templs) == 0 {
		t.Fatal("no .templ files found")
	}
	for _, f := range templs {
		problems = append(problems, checkTempl(t, f)...)
	}
	for _, dir := range []string{".", "../ui"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") ||
				strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, "_templ.go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			problems = append(problems, checkGo(p, 0, string(src))...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestTheRuleCatchesJoins proves the check fails on each way an expression
// used to be built.
func TestTheRuleCatchesJoins(t *testing.T) {
	bad := []string{
		`<b data-on:click={ "@post('/t/" + id + "/pin')" }></b>`,
		`<b data-init={ "@get('" + StreamURL(c) + "')" }></b>`,
		`<b data-show={ fmt.Sprintf("$x === %q", v) }></b>`,
		`<b data-on:click={ helper(x) }></b>`,
		`<b data-on:click={ Expr(tmpl, x) }></b>`,
		`<b data-on:click={ Expr("@post(%s, %s)", x) }></b>`,
		`<b data-signals={ chatSignals(c) }></b>`,
		`<b data-attr:href={ "/t/" + id }></b>`,
		`<b data-class:on={ "$a === '" + v + "'" }></b>`,
		`<b data-on-intersect__once={ "@get('" + u + "')" }></b>`,
	}
	for _, b := range bad {
		src := "package components\n\ntempl X() {\n\t" + b + "\n}\n"
		if len(checkTemplSource(t, "bad.templ", src)) == 0 {
			t.Errorf("not caught: %s", b)
		}
	}
	good := []string{
		`<b data-on:click="@post('/x')"></b>`,
		`<b data-on:click={ Expr("@post(%s)", ThreadAction(id, "pin")) }></b>`,
		`<b data-signals={ Signals(m) }></b>`,
		`<b data-key={ "a'" + id }></b>`,
	}
	for _, g := range good {
		src := "package components\n\ntempl X() {\n\t" + g + "\n}\n"
		if p := checkTemplSource(t, "good.templ", src); len(p) > 0 {
			t.Errorf("refused a safe expression: %s: %v", g, p)
		}
	}
	goBad := []string{
		`func f(id string) string { return "@post('/t/" + id + "')" }`,
		`func f(v string) string { return fmt.Sprintf("$x === %q", v) }`,
		`func f(v string) string { return "el.dataset.x + " + v }`,
	}
	for _, b := range goBad {
		if len(checkGo("bad.go", 0, "package x\n\n"+b+"\n")) == 0 {
			t.Errorf("not caught in Go: %s", b)
		}
	}
	if p := checkGo("good.go", 0, "package x\n\nfunc f(v string) string { return Expr(\"@post(%s)\", v) + \"\" }\nconst c = \"$a\" + \"$b\"\n"); len(p) > 0 {
		t.Errorf("refused safe Go: %v", p)
	}
}

func checkTempl(t *testing.T, path string) []string {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return checkTemplSource(t, path, string(src))
}

func checkTemplSource(t *testing.T, path, src string) []string {
	t.Helper()
	tf, err := tparser.ParseString(src)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var problems []string
	v := visitor.New()
	v.ExpressionAttribute = func(a *tparser.ExpressionAttribute) error {
		name := a.Key.String()
		if !dsAttr.MatchString(name) {
			return nil
		}
		line := int(a.Expression.Range.From.Line) + 1
		if p := checkAttrExpr(name, a.Expression.Value); p != "" {
			problems = append(problems, fmt.Sprintf("%s:%d: %s={ %s }: %s", path, line, name, a.Expression.Value, p))
		}
		return nil
	}
	v.BoolExpressionAttribute = func(a *tparser.BoolExpressionAttribute) error { return nil }
	v.TemplateFileGoExpression = func(g *tparser.TemplateFileGoExpression) error {
		problems = append(problems, checkGo(path, int(g.Expression.Range.From.Line), "package x\n"+g.Expression.Value)...)
		return nil
	}
	if err := tf.Visit(v); err != nil {
		t.Fatal(err)
	}
	return problems
}

// checkAttrExpr says what is wrong with the Go expression that gives a
// Datastar attribute its value, or "".
func checkAttrExpr(name, src string) string {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return "not a Go expression: " + err.Error()
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return ""
		}
	case *ast.CallExpr:
		fn, ok := e.Fun.(*ast.Ident)
		if !ok {
			break
		}
		if fn.Name == "Signals" && strings.HasPrefix(name, "data-signals") {
			return ""
		}
		if fn.Name != "Expr" {
			break
		}
		if len(e.Args) == 0 {
			return "Expr needs a template"
		}
		lit, ok := e.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "Expr's template must be a string constant"
		}
		tmpl, err := strconv.Unquote(lit.Value)
		if err != nil {
			return err.Error()
		}
		if n := strings.Count(tmpl, "%s"); n != len(e.Args)-1 {
			return fmt.Sprintf("Expr's template has %d %%s for %d values", n, len(e.Args)-1)
		}
		return ""
	}
	return "a value joined into a Datastar expression: use a string constant or Expr(\"…%s…\", value)"
}

// checkGo finds Go code that joins a value into a string that reads as a
// Datastar expression: a + with a non-constant operand, or a fmt call.
func checkGo(path string, lineOffset int, src string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return []string{fmt.Sprintf("%s: parse: %v", path, err)}
	}
	var problems []string
	report := func(n ast.Node, why string) {
		pos := fset.Position(n.Pos())
		problems = append(problems, fmt.Sprintf("%s:%d: %s", path, pos.Line+lineOffset, why))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.ADD && hasMarker(n) && !allLiterals(n) {
				report(n, "a value joined into a Datastar expression with +: use Expr(\"…%s…\", value)")
				return false
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "fmt" || pkg.Name == "strings") {
					for _, a := range n.Args {
						if hasMarker(a) {
							report(n, pkg.Name+"."+sel.Sel.Name+" builds a Datastar expression: use Expr(\"…%s…\", value)")
							return false
						}
					}
				}
			}
		}
		return true
	})
	return problems
}

func hasMarker(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if isExprCall(n) {
			found = true
		}
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && marker.MatchString(s) {
				found = true
			}
		}
		return !found
	})
	return found
}

// isExprCall reports a call of Expr: its result is an expression already.
func isExprCall(n ast.Node) bool {
	c, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	fn, ok := c.Fun.(*ast.Ident)
	return ok && fn.Name == "Expr"
}

// allLiterals reports whether e joins only constants and Expr results.
func allLiterals(e ast.Expr) bool {
	if isExprCall(e) {
		return true
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return allLiterals(e.X)
	case *ast.BinaryExpr:
		return allLiterals(e.X) && allLiterals(e.Y)
	}
	return false
}
