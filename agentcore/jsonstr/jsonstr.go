// Package jsonstr finds and decodes the big string values of a JSON
// document one by one, each in one allocation of its final size:
// encoding/json unquotes a string into a buffer and then copies it into a
// string, two copies of a reply's text or a tool's content where one is
// kept. agentcore (a tool call's input) and storage (a stored reply) take
// such strings out before decoding the rest and put them back after.
package jsonstr

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// BigStrings is where b's strings of at least from bytes, quotes
// included, begin and end. It reads only as far as it can make sense of b.
func BigStrings(b []byte, from int) [][2]int {
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

// Unquote is the JSON string q (quotes included) as encoding/json decodes
// it, made in one allocation of its final size; false if q is not a valid
// JSON string.
func Unquote(q []byte) (string, bool) {
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

// hex4 is the rune of the \u escape (four hex digits) at the start of s, or -1.
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
