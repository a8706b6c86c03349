package storage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"parley/agentcore"
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
	spans := bigStrings(b, from)
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

// bigStrings is where b's strings of at least from bytes, quotes
// included, begin and end. It reads only as far as it can make sense of b.
func bigStrings(b []byte, from int) [][2]int {
	var spans [][2]int
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		start, end := i+j, -1
		for k := start + 1; k < len(b); {
			q := bytes.IndexByte(b[k:], '"')
			if q < 0 {
				break
			}
			k += q
			slashes := 0
			for b[k-1-slashes] == '\\' {
				slashes++
			}
			if slashes%2 == 0 {
				end = k + 1
				break
			}
			k++
		}
		if end < 0 {
			break
		}
		if end-start >= from {
			spans = append(spans, [2]int{start, end})
		}
		i = end
	}
	return spans
}

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
	text, ok := unquote(r.b[span[0]:span[1]])
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

// unquote is the JSON string q (quotes included) as encoding/json decodes
// it, made in one allocation of its final size; false if q is not a valid
// JSON string.
func unquote(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	q = q[1 : len(q)-1]
	n, ok := unescape(nil, q)
	if !ok {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	buf := make([]byte, n)
	unescape(buf, q)
	return unsafe.String(unsafe.SliceData(buf), n), true
}

// unescape writes the text of the JSON string body s into dst (when it is
// not nil, of at least its length) and returns its length: escapes
// decoded, a lone or broken surrogate and invalid UTF-8 as U+FFFD, as
// encoding/json's unquote does.
func unescape(dst, s []byte) (int, bool) {
	w := 0
	put := func(p []byte) {
		if dst != nil {
			copy(dst[w:], p)
		}
		w += len(p)
	}
	var r4 [utf8.UTFMax]byte
	putRune := func(r rune) {
		put(r4[:utf8.EncodeRune(r4[:], r)])
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return 0, false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				put(s[i+1 : i+2])
				i += 2
			case 'b':
				put([]byte{'\b'})
				i += 2
			case 'f':
				put([]byte{'\f'})
				i += 2
			case 'n':
				put([]byte{'\n'})
				i += 2
			case 'r':
				put([]byte{'\r'})
				i += 2
			case 't':
				put([]byte{'\t'})
				i += 2
			case 'u':
				rr := hex4(s[i:])
				if rr < 0 {
					return 0, false
				}
				i += 6
				if utf16.IsSurrogate(rr) {
					if rr1 := hex4(s[i:]); rr1 >= 0 {
						if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
							i += 6
							putRune(dec)
							break
						}
					}
					rr = unicode.ReplacementChar
				}
				putRune(rr)
			default:
				return 0, false
			}
		case c == '"' || c < ' ':
			return 0, false
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] >= ' ' && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
				j++
			}
			put(s[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				putRune(utf8.RuneError)
			} else {
				put(s[i : i+size])
			}
			i += size
		}
	}
	return w, true
}

// hex4 is the rune of the \uXXXX at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
