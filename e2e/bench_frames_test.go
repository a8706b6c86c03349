package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"parley/agentcore/scripted"
)

// TestBenchLongFrames says what the page's long frames are made of while
// 1 MiB streams in 16-byte deltas (the streams of
// TestBenchLargeWritePreview), for when that bench's longest task grows:
// the longest Long Animation Frames with their scripts (invoker, source)
// and style/layout time, scripts summed over the stream, the long tasks
// and the DOM's size. It runs with -bench when PARLEY_FRAMES names the
// cases (text, code; e.g. PARLEY_FRAMES=text,code), and writes a Chrome
// trace of each case to PARLEY_FRAMES_TRACE.<case>.json when that is set
// (open it in chrome://tracing or Perfetto for the breakdown of a task),
// with the trace categories in PARLEY_FRAMES_TRACE_MORE added (e.g.
// disabled-by-default-devtools.timeline.invalidationTracking, to see what
// a style pass was made to recalculate). PARLEY_FRAMES_KIB sets the text's
// size (1024 by default).
//
// Without them (make test) it streams 8 KiB of text through the same
// observers and checks they recorded the stream, so the diagnostic is
// known to work when it is needed.
func TestBenchLongFrames(t *testing.T) {
	cases, size := os.Getenv("PARLEY_FRAMES"), 1<<20
	if kib, err := strconv.Atoi(os.Getenv("PARLEY_FRAMES_KIB")); err == nil && kib > 0 {
		size = kib << 10
	}
	diagnose := *benchFlag && cases != ""
	var s target
	if diagnose {
		s = startParleyProcess(t, t.TempDir(), newModel(t))
	} else {
		cases, size, s = "text", 8<<10, startParley(t).target()
	}
	for _, which := range strings.Split(cases, ",") {
		content := markdownText(size)
		if which == "code" {
			content = codeText(size)
		}
		id := s.newThread(t)
		s.yolo(t, id)
		pg, closePage := openThread(t, s, id)
		pg.MustEval(observeFrames)
		var stopTrace func()
		if path := os.Getenv("PARLEY_FRAMES_TRACE"); path != "" {
			stopTrace = startTrace(t, pg, path+"."+which+".json")
		}
		s.Model.Push(scripted.Reply{Text: content, Tokens: chunks(content, 16)})
		pg.MustEval(`() => { performance.mark('go'); window.__go = performance.now() }`) // what came before is the page's load
		s.say(t, id, "go")
		waitJSFor(t, pg, writeWait, runEnded)
		if stopTrace != nil {
			stopTrace()
		}
		if !diagnose {
			if !pg.MustEval(`() => Array.isArray(window.__loaf) && Array.isArray(window.__long) && Array.isArray(window.__nodes) && typeof window.__agg === 'object'`).Bool() {
				t.Fatal("the frame observers are not in the page")
			}
			closePage()
			continue
		}
		fmt.Println(which, "longest frames", pg.MustEval(`() => JSON.stringify(window.__loaf.sort((a,b)=>b.dur-a.dur).slice(0,6), null, 1)`).String())
		fmt.Println(which, "scripts and rendering summed", pg.MustEval(`() => JSON.stringify(Object.entries(window.__agg).filter(([k,v]) => v.dur > 30).map(([k,v]) => k + ' n=' + v.n + ' dur=' + Math.round(v.dur) + ' forced=' + Math.round(v.forced)), null, 1)`).String())
		fmt.Println(which, "long tasks", pg.MustEval(`() => { const l = window.__long.sort((a,b)=>b-a); return JSON.stringify({n: l.length, top: l.slice(0, 10).map(Math.round)}) }`).String())
		fmt.Println(which, "long tasks at (ms from the send:duration)", pg.MustEval(`() => window.__longAt.join(' ')`).String())
		fmt.Println(which, "elements every 2 s", pg.MustEval(`() => JSON.stringify(window.__nodes)`).String())
		closePage()
	}
}

// observeFrames records, in the page, from window.__go on: long tasks
// (__long, and __longAt: when each began), Long Animation Frames over 40 ms with their scripts (__loaf),
// every frame's scripts and rendering summed by source (__agg), and the
// element count every 2 s (__nodes).
const observeFrames = `() => {
	window.__loaf = []; window.__long = []; window.__agg = {};
	window.__longAt = [];
	new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.startTime > window.__go) { window.__long.push(e.duration); window.__longAt.push(Math.round(e.startTime - window.__go) + ':' + Math.round(e.duration)) } }).observe({type: 'longtask', buffered: true});
	new PerformanceObserver(list => { for (const e of list.getEntries()) {
		for (const s of e.scripts) { const k = s.invoker + ' ' + s.sourceURL.slice(-12) + ':' + s.sourceCharPosition; const a = window.__agg[k] ||= {n:0, dur:0, forced:0}; a.n++; a.dur += s.duration; a.forced += s.forcedStyleAndLayoutDuration }
		const a = window.__agg['(render)'] ||= {n:0, dur:0, forced:0}; if (e.renderStart) { a.n++; a.dur += e.startTime + e.duration - e.renderStart; a.forced += e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0 }
		if (e.duration > 40 && e.startTime > window.__go) window.__loaf.push({
		start: Math.round(e.startTime), dur: Math.round(e.duration), block: Math.round(e.blockingDuration),
		render: Math.round(e.renderStart ? e.startTime + e.duration - e.renderStart : 0),
		style: Math.round(e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0),
		scripts: e.scripts.map(s => Math.round(s.duration) + 'ms f' + Math.round(s.forcedStyleAndLayoutDuration) + ' ' + s.invoker + ' ' + s.sourceURL.slice(-12) + ':' + s.sourceCharPosition).join(' | ')
	}) } }).observe({type: 'long-animation-frame', buffered: true});
	window.__nodes = [];
	setInterval(() => window.__nodes.push(document.getElementsByTagName('*').length), 2000);
}`

// startTrace records a Chrome trace of the page's browser into path
// (chrome://tracing JSON) until the returned func is called.
func startTrace(t *testing.T, pg *rod.Page, path string) func() {
	b := pg.Browser()
	var mu sync.Mutex
	var events []any
	done := make(chan struct{})
	go b.EachEvent(func(e *proto.TracingDataCollected) {
		mu.Lock()
		for _, v := range e.Value {
			events = append(events, v)
		}
		mu.Unlock()
	}, func(e *proto.TracingTracingComplete) bool { close(done); return true })()
	categories := []string{"devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "blink", "toplevel", "blink.user_timing", "v8.execute", "disabled-by-default-v8.gc"}
	if more := os.Getenv("PARLEY_FRAMES_TRACE_MORE"); more != "" {
		categories = append(categories, strings.Split(more, ",")...)
	}
	err := proto.TracingStart{TransferMode: proto.TracingStartTransferModeReportEvents,
		TraceConfig: &proto.TracingTraceConfig{IncludedCategories: categories}}.Call(b)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := (proto.TracingEnd{}).Call(b); err != nil {
			t.Fatal(err)
		}
		<-done
		mu.Lock()
		defer mu.Unlock()
		data, _ := json.Marshal(map[string]any{"traceEvents": events})
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
