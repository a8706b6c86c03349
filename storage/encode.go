package storage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"parley/agentcore"
)

// spliceFrom is the size from which a text or argument of a message is
// written into its JSON by encodeContent itself, not by encoding/json:
// encoding/json grows its buffer by doubling and then copies the result, so
// a reply of N bytes cost ~3N of memory on every write of it; spliced, the
// JSON is made once, at its final size.
const spliceFrom = 64 << 10

// encodeContent is c as stored. Its Content, Mastra's plain text of the
// text parts, is left out when it is exactly that, and made again on read
// (decodeContent): a reply's text is encoded and stored once, not twice.
func encodeContent(c agentcore.Content) ([]byte, error) {
	return encodeSpliced(c, spliceFrom)
}

// encodeSpliced is encodeContent with the texts and arguments of at least
// from bytes spliced in: c is encoded with a marker in their place, and the
// result made at its exact size.
func encodeSpliced(c agentcore.Content, from int) ([]byte, error) {
	return encodeSplicedIn(c, from, nil)
}

// encodeSplicedIn is encodeSpliced making the spliced result in alloc(size)
// (an empty slice of at least that capacity), or in a new slice when alloc
// is nil.
func encodeSplicedIn(c agentcore.Content, from int, alloc func(size int) []byte) ([]byte, error) {
	if c.Content != "" && c.Content == partsText(c, c.Content) {
		c.Content = ""
	}
	var big []splice
	mark := func(s splice) string {
		big = append(big, s)
		return spliceMark + strconv.Itoa(len(big)-1) + "\x00"
	}
	var parts []agentcore.Part
	for i, p := range c.Parts {
		q := p
		if len(p.Text) >= from {
			q.Text = mark(splice{text: p.Text})
		}
		if ti := p.ToolInvocation; ti != nil && (len(ti.ArgsText) >= from || len(ti.Args) >= from) {
			t := *ti
			if len(t.ArgsText) >= from {
				t.ArgsText = mark(splice{text: t.ArgsText})
			}
			if len(t.Args) >= from && json.Valid(t.Args) {
				m, _ := json.Marshal(mark(splice{raw: t.Args}))
				t.Args = m
			}
			q.ToolInvocation = &t
		}
		if q != p && parts == nil {
			parts = make([]agentcore.Part, len(c.Parts))
			copy(parts, c.Parts)
		}
		if parts != nil {
			parts[i] = q
		}
	}
	if len(big) == 0 {
		return json.Marshal(c)
	}
	orig := c // parts is a copy: c itself is not changed
	c.Parts = parts
	small, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	// Where each marker is, in order (encoding/json keeps the order of
	// parts and fields); a marker found anywhere else means the content
	// held one of its own, and it is encoded the ordinary way.
	size, at := len(small), make([]int, len(big))
	for i := range big {
		q := []byte(strconv.Quote(spliceMark + strconv.Itoa(i) + "\x00"))
		q = bytes.ReplaceAll(q, []byte(`\x00`), []byte(`\u0000`))
		from := 0
		if i > 0 {
			from = at[i-1]
		}
		j := bytes.Index(small[from:], q)
		if j < 0 {
			return json.Marshal(orig)
		}
		at[i] = from + j
		big[i].markLen = len(q)
		size += big[i].size() - len(q)
	}
	if bytes.Count(small, []byte(`\u0000parley-splice-`)) != len(big) {
		return json.Marshal(orig)
	}
	var out []byte
	if alloc != nil {
		out = alloc(size)[:0]
	} else {
		out = make([]byte, 0, size)
	}
	last := 0
	for i, s := range big {
		out = append(out, small[last:at[i]]...)
		if s.raw != nil {
			out = append(out, s.raw...)
		} else {
			out = appendQuoted(out, s.text)
		}
		last = at[i] + s.markLen
	}
	return append(out, small[last:]...), nil
}

// spliceMark begins the marker of a spliced value; it ends with its number
// and a NUL.
const spliceMark = "\x00parley-splice-"

// splice is a value written into the JSON by hand: a text, or arguments
// that are JSON already.
type splice struct {
	text    string
	raw     json.RawMessage
	markLen int
}

func (s splice) size() int {
	if s.raw != nil {
		return len(s.raw)
	}
	return quotedLen(s.text)
}

// quotedLen is the length of s as a JSON string (appendQuoted).
func quotedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// appendQuoted appends s as a JSON string, as encoding/json writes it
// without its HTML escaping: invalid UTF-8 becomes U+FFFD.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
