package agentcore

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A tool call's input is decoded twice, once for its validation
// (decodeInput) and once into a typed tool's input (NewTool), and
// encoding/json unquotes each string into a buffer and then copies it into
// a string: a write_file call of N bytes made four copies of its content
// of N bytes, two of them garbage at once. Its big strings are instead
// taken out of the JSON before it is decoded and put back afterwards, each
// decoded in one allocation of its final size. (storage/decode.go reads a
// stored reply the same way.)

// spliceFrom is the size, quotes included, from which a string value of
// an input is decoded on its own.
const inputSpliceFrom = 64 << 10

// inputMark begins the marker that stands for a big string in the JSON
// decoded without it; the marker ends with its number and a NUL.
const inputMark = "\x00parley-input-"

// spliced is an input with its big string values taken out.
type spliced struct {
	small []byte   // the input, a marker in place of each big string
	big   []string // the big strings, decoded, by marker number
}

// spliceInput takes doc's big string values (not keys) out of it; false
// when it has none, or one that is not a valid JSON string (the ordinary
// decode then says why).
func spliceInput(doc []byte) (spliced, bool) {
	if len(doc) < inputSpliceFrom {
		return spliced{}, false
	}
	var s spliced
	last := 0
	for _, sp := range bigStrings(doc, inputSpliceFrom) {
		if rest := bytes.TrimLeft(doc[sp[1]:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			continue // a key
		}
		text, ok := unquote(doc[sp[0]:sp[1]])
		if !ok {
			return spliced{}, false
		}
		if s.small == nil {
			s.small = make([]byte, 0, 1024)
		}
		s.small = append(s.small, doc[last:sp[0]]...)
		s.small = append(s.small, `"\u0000parley-input-`...)
		s.small = strconv.AppendInt(s.small, int64(len(s.big)), 10)
		s.small = append(s.small, `\u0000"`...)
		s.big = append(s.big, text)
		last = sp[1]
	}
	if len(s.big) == 0 {
		return spliced{}, false
	}
	s.small = append(s.small, doc[last:]...)
	return s, true
}

// inputRestorer puts the big strings back in place of their markers; each
// marker must be found once, and nothing else may look like one.
type inputRestorer struct {
	big    []string
	used   []bool
	n      int
	failed bool
}

func newInputRestorer(s spliced) *inputRestorer {
	return &inputRestorer{big: s.big, used: make([]bool, len(s.big))}
}

// done reports whether every marker was put back and nothing failed.
func (r *inputRestorer) done() bool { return !r.failed && r.n == len(r.big) }

// str is the string s stands for, and whether it is a marker.
func (r *inputRestorer) str(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, inputMark)
	if !ok {
		return s, false
	}
	num, ok := strings.CutSuffix(rest, "\x00")
	i, err := strconv.Atoi(num)
	if !ok || err != nil || i < 0 || i >= len(r.big) || r.used[i] {
		r.failed = true
		return s, false
	}
	r.used[i] = true
	r.n++
	return r.big[i], true
}

// value puts the strings back into v, a value encoding/json decoded into
// `any`.
func (r *inputRestorer) value(v any) any {
	switch x := v.(type) {
	case string:
		if s, ok := r.str(x); ok {
			return s
		}
	case map[string]any:
		for k, e := range x {
			if strings.HasPrefix(k, inputMark) {
				r.failed = true
			}
			x[k] = r.value(e)
		}
	case []any:
		for i, e := range x {
			x[i] = r.value(e)
		}
	}
	return v
}

// typed puts the strings back into v, a value encoding/json decoded into a
// Go type: its strings, through pointers, interfaces, exported fields,
// slices, arrays and maps. A marker anywhere else (an unexported field, a
// type that decodes itself) is not found, and done says so.
func (r *inputRestorer) typed(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s, ok := r.str(v.String()); ok {
			if !v.CanSet() {
				r.failed = true
				return
			}
			v.SetString(s)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			r.typed(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.String || e.Kind() == reflect.Struct || e.Kind() == reflect.Array {
			// Not addressable inside the interface: a copy is set back.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			r.typed(c)
			if v.CanSet() {
				v.Set(c)
			} else {
				r.failed = true
			}
			return
		}
		r.typed(e)
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				r.typed(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if !holdsStrings(v.Type().Elem()) {
			return
		}
		for i := range v.Len() {
			r.typed(v.Index(i))
		}
	case reflect.Map:
		if !holdsStrings(v.Type().Elem()) && !holdsStrings(v.Type().Key()) {
			return
		}
		it := v.MapRange()
		for it.Next() {
			if k := it.Key(); k.Kind() == reflect.String && strings.HasPrefix(k.String(), inputMark) {
				r.failed = true
			}
			c := reflect.New(it.Value().Type()).Elem()
			c.Set(it.Value())
			r.typed(c)
			v.SetMapIndex(it.Key(), c)
		}
	}
}

// holdsStrings reports whether a value of type t may hold a string.
func holdsStrings(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}

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
