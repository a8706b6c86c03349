package agentcore

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"parley/agentcore/jsonstr"
)

// A tool call's input is decoded twice, once for its validation
// (decodeInput) and once into a typed tool's input (NewTool), and
// encoding/json unquotes each string into a buffer and then copies it into
// a string: a write_file call of N bytes made four copies of its content
// of N bytes, two of them garbage at once. Its big strings are instead
// taken out of the JSON before it is decoded and put back afterwards, each
// decoded in one allocation of its final size, and a typed tool takes the
// strings its input's validation decoded (decodedInput). (storage/decode.go
// reads a stored reply the same way.)

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

// decodedInput keeps the big strings of an input decoded for its
// validation, for the typed tool's decode of the same input (ToolContext):
// a write_file of N bytes had its content decoded twice, N bytes each.
type decodedInput struct {
	src []byte   // the input they were decoded from, by identity
	big []string // its big strings, in order
}

// of is the big strings decoded from doc itself (the same bytes, not equal
// ones), or nil.
func (d *decodedInput) of(doc []byte) []string {
	if d == nil || len(doc) == 0 || len(d.src) != len(doc) || unsafe.SliceData(d.src) != unsafe.SliceData(doc) {
		return nil
	}
	return d.big
}

// spliceInput takes doc's big string values (not keys) out of it; false
// when it has none, or one that is not a valid JSON string (the ordinary
// decode then says why). known, the big strings already decoded from doc
// (decodedInput.of), are taken instead of decoding them again.
func spliceInput(doc []byte, known []string) (spliced, bool) {
	if len(doc) < inputSpliceFrom {
		return spliced{}, false
	}
	var s spliced
	last := 0
	for _, sp := range jsonstr.BigStrings(doc, inputSpliceFrom) {
		if rest := bytes.TrimLeft(doc[sp[1]:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			continue // a key
		}
		var text string
		if known != nil {
			if len(s.big) >= len(known) {
				return spliceInput(doc, nil)
			}
			text = known[len(s.big)]
		} else {
			var ok bool
			if text, ok = jsonstr.Unquote(doc[sp[0]:sp[1]]); !ok {
				return spliced{}, false
			}
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
	if known != nil && len(s.big) != len(known) {
		return spliceInput(doc, nil)
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
