package agentcore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidToolInput is wrapped by RepairToolInput's error. The message is
// read by the model, which is asked to correct its call.
var ErrInvalidToolInput = errors.New("invalid JSON in tool arguments")

// RepairToolInput returns a completed tool call's argument text as valid
// JSON (spec §2.5). Valid text is returned unchanged, and empty text is "{}"
// (a call with no arguments). Otherwise the mistakes models are known to make
// are repaired:
//
//   - special tokens such as <|call|> outside strings (gpt-4o appends them)
//   - a key missing its opening quote: {"a":"b",c":"d"} (Kimi K2)
//   - unquoted keys: {command:"ls"}
//   - single-quoted strings: {'key':'it\'s'}; an apostrophe inside a
//     double-quoted string is left alone
//   - trailing commas before } or ]
//
// Unlike Mastra's regular expressions, the repair reads the text as tokens,
// so it never rewrites the inside of a double-quoted string.
//
// If the text is still invalid, the error wraps ErrInvalidToolInput and says
// what is wrong and where, in the text the model wrote:
//
//	invalid JSON in tool arguments: invalid character '2' after array element (at byte 8, near "{\"a\":[1 2")
func RepairToolInput(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "{}", nil
	}
	if json.Valid([]byte(raw)) {
		return raw, nil
	}
	out, src := repairJSON(raw)
	if json.Valid(out) {
		return strings.TrimSpace(string(out)), nil
	}
	// Unmarshal checks the syntax before decoding, so this is the
	// *json.SyntaxError that Valid found. It is in the repaired text, past
	// the mistakes already repaired; report it at the model's own byte.
	var v any
	err := json.Unmarshal(out, &v)
	at := len(raw)
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(src) && !strings.Contains(se.Error(), "end of JSON input") {
		at = src[se.Offset-1] // Offset counts the bytes read, the bad one included
	}
	return "", fmt.Errorf("%w: %v (at byte %d, near %q)", ErrInvalidToolInput, err, at, near(raw, at))
}

// nearWidth is how much of the text before an error the message quotes:
// enough for the model to find the spot, short enough to stay one line.
const nearWidth = 24

// near returns the text leading up to and including byte at, cut at rune
// boundaries where the text is valid UTF-8.
func near(s string, at int) string {
	end := min(at+1, len(s))
	for k := 1; k < utf8.UTFMax && end < len(s) && !utf8.RuneStart(s[end]); k++ {
		end++
	}
	start := max(end-nearWidth, 0)
	for k := 1; k < utf8.UTFMax && start < end && !utf8.RuneStart(s[start]); k++ {
		start++
	}
	return s[start:end]
}

// repairJSON rewrites raw token by token. src[i] is the offset in raw of the
// byte that out[i] came from, so errors can point at the model's text.
func repairJSON(raw string) (out []byte, src []int) {
	r := repairer{out: make([]byte, 0, len(raw)+16), src: make([]int, 0, len(raw)+16)}
	var stack []byte // open brackets
	expectKey := false
	lastComma := -1 // index in out of a comma followed only by whitespace
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.put(c, i)
			i++
			continue // whitespace changes neither expectKey nor lastComma
		case c == '<' && strings.HasPrefix(raw[i:], "<|"):
			if n := specialToken(raw[i:]); n > 0 {
				i += n
				continue
			}
			r.put(c, i)
			i++
			expectKey = false
		case c == '"':
			j := stringEnd(raw, i, '"')
			for k := i; k < j; k++ {
				r.put(raw[k], k)
			}
			i = j
			expectKey = false
		case c == '\'':
			i = r.singleQuoted(raw, i)
			expectKey = false
		case expectKey && isIdentStart(c):
			j := i + 1
			for j < len(raw) && isIdentPart(raw[j]) {
				j++
			}
			k := j
			for k < len(raw) && strings.IndexByte(" \t\n\r", raw[k]) >= 0 {
				k++
			}
			switch {
			case j < len(raw) && raw[j] == '"': // c":  the opening quote is missing
				r.put('"', i)
				r.copy(raw, i, j)
				r.put('"', j)
				i = j + 1
			case k < len(raw) && raw[k] == ':': // c:  both quotes are missing
				r.put('"', i)
				r.copy(raw, i, j)
				r.put('"', j-1)
				i = j
			default:
				r.copy(raw, i, j)
				i = j
			}
			expectKey = false
		case c == '{' || c == '[':
			stack = append(stack, c)
			r.put(c, i)
			i++
			expectKey = c == '{'
		case c == '}' || c == ']':
			if lastComma >= 0 {
				r.remove(lastComma)
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			r.put(c, i)
			i++
			expectKey = false
		case c == ',':
			r.put(c, i)
			i++
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
			lastComma = len(r.out) - 1
			continue
		default:
			r.put(c, i)
			i++
			expectKey = false
		}
		lastComma = -1
	}
	return r.out, r.src
}

type repairer struct {
	out []byte
	src []int
}

func (r *repairer) put(c byte, at int) {
	r.out = append(r.out, c)
	r.src = append(r.src, at)
}

func (r *repairer) copy(s string, from, to int) {
	for k := from; k < to; k++ {
		r.put(s[k], k)
	}
}

func (r *repairer) remove(i int) {
	r.out = append(r.out[:i], r.out[i+1:]...)
	r.src = append(r.src[:i], r.src[i+1:]...)
}

// singleQuoted writes the single-quoted string at raw[i] as a double-quoted
// one and returns the offset after it: \' becomes ', and " is escaped.
func (r *repairer) singleQuoted(raw string, i int) int {
	end := stringEnd(raw, i, '\'')
	r.put('"', i)
	for k := i + 1; k < end; k++ {
		c := raw[k]
		switch {
		case c == '\\' && k+1 < end && raw[k+1] == '\'':
			r.put('\'', k)
			k++
		case c == '\\' && k+1 < end:
			r.put(c, k)
			r.put(raw[k+1], k+1)
			k++
		case c == '"':
			r.put('\\', k)
			r.put('"', k)
		case c == '\'' && k == end-1:
			r.put('"', k) // the closing quote
		default:
			r.put(c, k)
		}
	}
	return end
}

// stringEnd returns the offset after the string opened by quote at s[i]: past
// its closing quote, or len(s) if it is unterminated.
func stringEnd(s string, i int, quote byte) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case quote:
			return j + 1
		}
	}
	return len(s)
}

// specialToken returns the length of the <|…|> token at the start of s, or 0.
func specialToken(s string) int {
	for j := 2; j+1 < len(s); j++ {
		if s[j] == '|' {
			if s[j+1] == '>' {
				return j + 2
			}
			return 0
		}
	}
	return 0
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }
