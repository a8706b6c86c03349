package storage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"parley/agentcore"
	"parley/agentcore/jsonstr"
)

// decodeSpliced reads stored content into c as json.Unmarshal does, with
// the strings of at least from bytes (quotes included) taken out of the
// JSON first and put back afterwards, each decoded in one allocation of
// its final size: encoding/json unquotes a string into a buffer and then
// copies it into a string, two copies of a reply's text where one is
// kept. A spliced string must land in a text, an argument text, a
// progress, a model output or a raw value (arguments, result) of the
// content; anywhere else, or when the JSON holds a marker of its own, it
// is decoded the ordinary way.
func decodeSpliced(b []byte, c *agentcore.Content, from int) error {
	spans := jsonstr.BigStrings(b, from)
	if len(spans) == 0 || bytes.Contains(b, []byte(quotedMark)) {
		return json.Unmarshal(b, c)
	}
	size := len(b)
	for _, s := range spans {
		size -= s[1] - s[0]
		size += len(quotedMark) + 2 + 8
	}
	small := make([]byte, 0, size)
	last := 0
	for i, s := range spans {
		small = append(small, b[last:s[0]]...)
		small = append(small, quotedMark...)
		small = strconv.AppendInt(small, int64(i), 10)
		small = append(small, `\u0000"`...)
		last = s[1]
	}
	small = append(small, b[last:]...)
	var back agentcore.Content
	if err := json.Unmarshal(small, &back); err != nil {
		return json.Unmarshal(b, c)
	}
	r := restorer{b: b, spans: spans, used: make([]bool, len(spans))}
	r.str(&back.Content)
	for i := range back.Parts {
		p := &back.Parts[i]
		r.str(&p.Text)
		if ti := p.ToolInvocation; ti != nil {
			r.str(&ti.ArgsText)
			r.str(&ti.Progress)
			r.str(&ti.ModelOutput)
			r.raw(&ti.Args)
			r.raw(&ti.Result)
		}
	}
	if r.failed || r.n != len(spans) {
		return json.Unmarshal(b, c)
	}
	*c = back
	return nil
}

// quotedMark is spliceMark as it is written in JSON.
const quotedMark = `"\u0000parley-splice-`

// restorer puts the spliced strings of decodeSpliced back in place of
// their markers.
type restorer struct {
	b      []byte
	spans  [][2]int
	used   []bool
	n      int
	failed bool
}

// take is the span marker i stands for, once.
func (r *restorer) take(i int) ([2]int, bool) {
	if i < 0 || i >= len(r.spans) || r.used[i] {
		r.failed = true
		return [2]int{}, false
	}
	r.used[i] = true
	r.n++
	return r.spans[i], true
}

func (r *restorer) str(s *string) {
	rest, ok := strings.CutPrefix(*s, spliceMark)
	if !ok {
		return
	}
	num, ok := strings.CutSuffix(rest, "\x00")
	i, err := strconv.Atoi(num)
	if !ok || err != nil {
		r.failed = true
		return
	}
	span, ok := r.take(i)
	if !ok {
		return
	}
	text, ok := jsonstr.Unquote(r.b[span[0]:span[1]])
	if !ok {
		r.failed = true
		return
	}
	*s = text
}

// raw puts the markers in a raw value back as the JSON strings they stand
// for, in a new value of its final size.
func (r *restorer) raw(v *json.RawMessage) {
	if !bytes.Contains(*v, []byte(quotedMark)) {
		return
	}
	type piece struct{ at, end, span int }
	var pieces []piece
	size := len(*v)
	for at := 0; ; {
		j := bytes.Index((*v)[at:], []byte(quotedMark))
		if j < 0 {
			break
		}
		at += j
		k := at + len(quotedMark)
		e := bytes.Index((*v)[k:], []byte(`\u0000"`))
		if e < 0 {
			r.failed = true
			return
		}
		i, err := strconv.Atoi(string((*v)[k : k+e]))
		if err != nil {
			r.failed = true
			return
		}
		span, ok := r.take(i)
		if !ok {
			return
		}
		end := k + e + len(`\u0000"`)
		pieces = append(pieces, piece{at, end, i})
		size += span[1] - span[0] - (end - at)
		at = end
	}
	out := make([]byte, 0, size)
	last := 0
	for _, p := range pieces {
		s := r.spans[p.span]
		out = append(out, (*v)[last:p.at]...)
		out = append(out, r.b[s[0]:s[1]]...)
		last = p.end
	}
	*v = append(out, (*v)[last:]...)
}
