package markdown

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// TeX becomes MathML with Temml (temml/temml.min.js, MIT, vendored with its
// licence; `make temml` fetches it again and checks it), run by goja, a
// JavaScript interpreter in pure Go. No script runs on the page: the browser
// receives MathML, which it lays out natively.
//
// The TeX is the model's, so it is hostile: Temml runs untrusted (no \href,
// \url, \class, \style or \html…), with its macro expansion capped, a
// bounded length and a time limit, and its output still passes the
// sanitiser, which knows only MathML's layout elements (sanitize.go).

//go:embed temml/temml.min.js
var temmlJS string

const (
	// TemmlVersion is the vendored Temml release.
	TemmlVersion = "0.13.5"
	// temmlSHA256 is dist/temml.min.js of that release.
	temmlSHA256 = "1ab19148afe0dbc836b7a74f344071b3f3a70a7a8259ae4049e76894fcdf8d95"
	// texLimit bounds one formula; longer TeX shows as its source.
	texLimit = 8 << 10
	// texTimeLimit bounds one conversion. Ordinary formulas take well under
	// a millisecond; this only stops a pathological one holding the lock.
	texTimeLimit = 2 * time.Second
)

// temml is one interpreter with Temml loaded, built on first use (about
// 30 ms). A goja runtime serves one goroutine at a time, hence the lock;
// conversions are short and cached (mathMemo).
type temml struct {
	mu     sync.Mutex
	vm     *goja.Runtime
	render goja.Callable
}

var temmlOnce = sync.OnceValues(func() (*temml, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(2048) // deeply nested braces end as an error, not a crash
	prog, err := goja.Compile("temml.min.js", temmlJS, true)
	if err != nil {
		return nil, fmt.Errorf("load temml: %w", err)
	}
	if _, err := vm.RunProgram(prog); err != nil {
		return nil, fmt.Errorf("load temml: %w", err)
	}
	fn, err := vm.RunString(`(function (tex, display) {
		return temml.renderToString(tex, {
			displayMode: display, annotate: true, throwOnError: true,
			trust: false, strict: false, maxExpand: 1000, maxSize: [40, 40],
			wrap: display ? "none" : "tex"
		});
	})`)
	if err != nil {
		return nil, fmt.Errorf("load temml: %w", err)
	}
	render, ok := goja.AssertFunction(fn)
	if !ok {
		return nil, errors.New("load temml: renderToString is not a function")
	}
	return &temml{vm: vm, render: render}, nil
})

// toMathML converts tex to a <math> element. Its errors are fit to show a
// reader: "TeX error: …" with Temml's reason.
func toMathML(tex string, display bool) (string, error) {
	if len(tex) > texLimit {
		return "", fmt.Errorf("TeX error: the formula is longer than %d KiB", texLimit>>10)
	}
	t, err := temmlOnce()
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	timer := time.AfterFunc(texTimeLimit, func() { t.vm.Interrupt("time limit") })
	v, err := t.render(goja.Undefined(), t.vm.ToValue(tex), t.vm.ToValue(display))
	timer.Stop()
	t.vm.ClearInterrupt()
	if err != nil {
		return "", texError(err)
	}
	out, ok := v.Export().(string)
	if !ok || !strings.HasPrefix(out, "<math") {
		return "", errors.New("TeX error: the converter returned no MathML")
	}
	return out, nil
}

// texError keeps the reason of a Temml ParseError and drops where in the
// script it was raised and the excerpt Temml underlines with combining
// characters.
func texError(err error) error {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		return fmt.Errorf("TeX error: the formula took longer than %s to convert", texTimeLimit)
	}
	msg := err.Error()
	var ex *goja.Exception
	if errors.As(err, &ex) {
		if obj, ok := ex.Value().(*goja.Object); ok {
			if m := obj.Get("message"); m != nil {
				msg = m.String()
			}
		}
	}
	msg = strings.TrimSpace(msg)
	for _, cut := range []string{" at position ", " at end of input"} {
		if i := strings.Index(msg, cut); i > 0 {
			msg = msg[:i]
		}
	}
	msg = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(msg, "ParseError:")), ":")
	if msg == "" {
		msg = "the formula could not be read"
	}
	return errors.New("TeX error: " + msg)
}
