package partialjson

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// refParse is the test oracle: npm partial-json 0.1.7's algorithm
// (promplate/partial-json-parser-js src/index.ts, Allow.ALL) re-parsing the
// whole text by recursive descent with a single index, as Mastra Code does
// after every delta. It returns the value and the top-level object's keys in
// order.
//
// It differs from npm where npm is wrong or lenient, matching the package
// contract: it rejects what is not a prefix of valid JSON instead of
// swallowing it (missing ':' or ',', trailing commas and text, a malformed
// token inside a container), it reads "[ ]" correctly, and in strings it
// holds back an incomplete UTF-8 sequence or high surrogate at the end.
func refParse(text string) (any, []string, error) {
	r := &refParser{s: text}
	r.skipBlank()
	if r.i == len(r.s) {
		return nil, nil, ErrIncomplete // npm: "… is empty"
	}
	v, err := r.parseAny(true)
	if err != nil {
		return nil, nil, ErrMalformed // at top level only malformed text throws
	}
	r.skipBlank()
	if r.i < len(r.s) {
		return nil, nil, ErrMalformed
	}
	return v, r.topKeys, nil
}

// errPartial is npm's PartialJSON: a value that has not started, or cannot be
// shown yet. Containers drop it.
var errPartial = errors.New("partial")

type refParser struct {
	s       string
	i       int
	depth   int
	topKeys []string
}

func (r *refParser) skipBlank() {
	for r.i < len(r.s) && strings.IndexByte(" \n\r\t", r.s[r.i]) >= 0 {
		r.i++
	}
}

func (r *refParser) parseAny(top bool) (any, error) {
	r.skipBlank()
	if r.i >= len(r.s) {
		return nil, errPartial
	}
	switch r.s[r.i] {
	case '"':
		return r.parseStr()
	case '{':
		return r.parseObj()
	case '[':
		return r.parseArr()
	}
	// npm checks each literal in turn: spelled out in full, or a prefix of
	// it that runs to the end of the text ("-" alone is left to numbers).
	rest := r.s[r.i:]
	for _, l := range literals {
		if strings.HasPrefix(rest, l.text) {
			r.i += len(l.text)
			return l.value, nil
		}
		if len(rest) < len(l.text) && strings.HasPrefix(l.text, rest) && (l.text != "-Infinity" || len(rest) > 1) {
			r.i = len(r.s)
			return l.value, nil
		}
	}
	if c := r.s[r.i]; c == '-' || '0' <= c && c <= '9' {
		return r.parseNum(top)
	}
	return nil, ErrMalformed
}

func (r *refParser) parseStr() (any, error) {
	start := r.i
	escape := false
	r.i++ // skip the opening quote
	for r.i < len(r.s) && (r.s[r.i] != '"' || escape) {
		escape = r.s[r.i] == '\\' && !escape
		r.i++
	}
	if r.i < len(r.s) {
		r.i++
		var out string
		if json.Unmarshal([]byte(r.s[start:r.i]), &out) != nil {
			return nil, ErrMalformed
		}
		return out, nil
	}
	// Unterminated: leave out whatever is not complete at the very end — an
	// incomplete UTF-8 sequence, a lone trailing backslash (npm), or a broken
	// \u escape (npm cuts at the last backslash) — then a high surrogate left
	// waiting for its low half.
	body := r.s[start+1:]
	switch {
	case len(trimIncompleteUTF8(body)) < len(body):
		body = trimIncompleteUTF8(body)
	case escape:
		body = body[:len(body)-1]
	default:
		if m := brokenEscape.FindStringIndex(body); m != nil && escapes(body, m[0]) {
			body = body[:m[0]]
		}
	}
	if m := highSurrogate.FindStringIndex(body); m != nil && escapes(body, m[0]) {
		body = body[:m[0]]
	}
	var out string
	if json.Unmarshal([]byte(`"`+body+`"`), &out) != nil {
		return nil, ErrMalformed
	}
	return out, nil
}

var (
	brokenEscape  = regexp.MustCompile(`\\u[0-9a-fA-F]{0,3}$`)
	highSurrogate = regexp.MustCompile(`\\u[dD][89abAB][0-9a-fA-F]{2}$`)
)

// escapes reports whether the backslash at s[i] starts an escape, that is
// is preceded by an even number of backslashes.
func escapes(s string, i int) bool {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 0
}

func trimIncompleteUTF8(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			break
		}
	}
	return s
}

func (r *refParser) parseObj() (any, error) {
	r.i++ // skip the opening brace
	r.depth++
	defer func() { r.depth-- }()
	obj := map[string]any{}
	r.skipBlank()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return obj, nil
	}
	for {
		r.skipBlank()
		if r.i >= len(r.s) {
			return obj, nil
		}
		if r.s[r.i] != '"' {
			return nil, ErrMalformed
		}
		k, err := r.parseStr()
		if err != nil {
			return nil, err
		}
		key := k.(string)
		r.skipBlank()
		if r.i >= len(r.s) {
			return obj, nil // a key without its value is dropped
		}
		if r.s[r.i] != ':' {
			return nil, ErrMalformed
		}
		r.i++
		v, err := r.parseAny(false)
		if err == errPartial {
			return obj, nil // so is a value that cannot be shown yet
		}
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; !dup && r.depth == 1 {
			r.topKeys = append(r.topKeys, key)
		}
		obj[key] = v
		r.skipBlank()
		if r.i >= len(r.s) {
			return obj, nil
		}
		switch r.s[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			return obj, nil
		default:
			return nil, ErrMalformed
		}
	}
}

func (r *refParser) parseArr() (any, error) {
	r.i++ // skip the opening bracket
	r.depth++
	defer func() { r.depth-- }()
	arr := []any{}
	r.skipBlank()
	if r.i < len(r.s) && r.s[r.i] == ']' {
		r.i++
		return arr, nil
	}
	for {
		v, err := r.parseAny(false)
		if err == errPartial {
			return arr, nil
		}
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		r.skipBlank()
		if r.i >= len(r.s) {
			return arr, nil
		}
		switch r.s[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return arr, nil
		default:
			return nil, ErrMalformed
		}
	}
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func refNumber(t string) (float64, bool) {
	if !jsonNumber.MatchString(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true // out of range is ±Inf, as JSON.parse gives
}

func (r *refParser) parseNum(top bool) (any, error) {
	start := r.i
	for r.i < len(r.s) && strings.IndexByte("0123456789+-.eE", r.s[r.i]) >= 0 {
		r.i++
	}
	t := r.s[start:r.i]
	if f, ok := refNumber(t); ok {
		return f, nil
	}
	// Only a number cut off by the end of the text may be incomplete, and
	// only if some digit would complete it.
	if r.i < len(r.s) {
		return nil, ErrMalformed
	}
	if _, ok := refNumber(t + "0"); !ok {
		return nil, ErrMalformed
	}
	// npm: retry up to the last "e" ("1.5e+" is 1.5).
	if k := strings.LastIndexByte(t, 'e'); k > 0 {
		if f, ok := refNumber(t[:k]); ok {
			return f, nil
		}
	}
	// npm: "-" is PartialJSON, anything else ("12.", "1E") MalformedJSON,
	// which a container swallows and top level throws.
	if top {
		return nil, ErrMalformed
	}
	return nil, errPartial
}
