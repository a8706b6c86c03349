package llm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	"charm.land/fantasy"
)

// spliceFrom is the size from which a tool call's input goes into an
// OpenAI request's body by Parley's transport, not by the SDK: the SDK
// encodes a call's arguments once per level of its nested parameters
// (function, tool call, message, request) and copies the body again to set
// fields, ~15 times a 10 MiB write_file argument on the request that sends
// it back with the tool's result. The prompt carries a short marker in
// its place, and the transport writes the input where the marker is.
const spliceFrom = 64 << 10

// spliceMin is spliceFrom; a test raises it to see the SDK's own body.
var spliceMin = spliceFrom

// splices are the inputs a request's markers stand for.
type splices struct {
	nonce  string
	inputs []string
}

type splicesKey struct{}

// marker is the text that stands for input i.
func (s *splices) marker(i int) string {
	return "\x00parley-input-" + s.nonce + "-" + strconv.Itoa(i) + "\x00"
}

// spliceInputs puts markers in place of the big tool call inputs of call's
// prompt, for an SDK that sends a call's input as a JSON string (OpenAI's
// Chat Completions and Responses: the arguments). nil when there are none.
func spliceInputs(call *fantasy.Call) *splices {
	var s *splices
	for _, m := range call.Prompt {
		for j, p := range m.Content {
			tc, ok := p.(fantasy.ToolCallPart)
			if !ok || len(tc.Input) < spliceMin {
				continue
			}
			if s == nil {
				b := make([]byte, 16)
				rand.Read(b)
				s = &splices{nonce: hex.EncodeToString(b)}
			}
			s.inputs = append(s.inputs, tc.Input)
			tc.Input = s.marker(len(s.inputs) - 1)
			m.Content[j] = tc
		}
	}
	return s
}

// spliced returns req with its body's markers replaced by the inputs they
// stand for, as the SDK would have encoded them (a JSON string, quoteReader); req as it
// is when its context has none.
func spliced(req *http.Request) (*http.Request, error) {
	s, ok := req.Context().Value(splicesKey{}).(*splices)
	if !ok || req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var pieces [][]byte
	size, rest := 0, body
	for i, in := range s.inputs {
		q, _ := json.Marshal(s.marker(i)) // a string: cannot fail
		at := bytes.Index(rest, q)
		if at < 0 || bytes.Contains(rest[at+len(q):], q) {
			return nil, fmt.Errorf("the request does not hold the input of tool call %d once", i)
		}
		pieces = append(pieces, rest[:at])
		size += at + quotedSize(in)
		rest = rest[at+len(q):]
	}
	pieces = append(pieces, rest)
	size += len(rest)
	out := req.Clone(req.Context())
	out.ContentLength = int64(size)
	// The inputs are quoted as the body is read, a window at a time: the
	// body never holds a quoted copy of a 10 MiB argument.
	out.GetBody = func() (io.ReadCloser, error) {
		readers := make([]io.Reader, 0, 2*len(pieces))
		for i, p := range pieces {
			readers = append(readers, bytes.NewReader(p))
			if i < len(s.inputs) {
				readers = append(readers, &quoteReader{s: s.inputs[i]})
			}
		}
		return io.NopCloser(io.MultiReader(readers...)), nil
	}
	out.Body, _ = out.GetBody()
	return out, nil
}

// quotedSize is the size of s as a JSON string, as the OpenAI SDK's
// encoder writes it (encoding/json's, without its HTML escaping): what
// quoteParts and a quoteReader write.
func quotedSize(s string) int {
	n := 0
	quoteParts(s, func(p string) { n += len(p) })
	return n
}

// quoteReader reads s as quoteJSON writes it, quoting a window of s at a
// time.
type quoteReader struct {
	s       string // what is still to quote
	buf     []byte // quoted, not read yet
	back    []byte // what buf is made in
	started bool
	done    bool
}

// quoteWindow is how much of s a quoteReader quotes at a time.
const quoteWindow = 32 << 10

func (r *quoteReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.done {
			return 0, io.EOF
		}
		r.fill()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// fill quotes the next window of s into buf: up to quoteWindow bytes, cut
// at the start of a UTF-8 sequence (within utf8.UTFMax of it), so that no
// sequence is split and each window quotes as it does within s.
func (r *quoteReader) fill() {
	buf := r.back[:0]
	if !r.started {
		r.started = true
		buf = append(buf, '"')
	}
	end := len(r.s)
	if end > quoteWindow {
		end = quoteWindow
		for cut := end; cut > quoteWindow-utf8.UTFMax; cut-- {
			if utf8.RuneStart(r.s[cut]) {
				end = cut
				break
			}
		}
	}
	quoteBody(r.s[:end], func(p string) { buf = append(buf, p...) })
	if r.s = r.s[end:]; r.s == "" {
		r.done = true
		buf = append(buf, '"')
	}
	r.buf, r.back = buf, buf
}

// quoteParts hands out s as a JSON string, piece by piece, as
// encoding/json's appendString writes it without HTML escaping: \b \f \n
// \r \t \" \\ short, other control bytes as \u00XX, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029.
func quoteParts(s string, put func(string)) {
	put(`"`)
	quoteBody(s, put)
	put(`"`)
}

// quoteBody is quoteParts without the quotes.
func quoteBody(s string, put func(string)) {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		var esc string
		c := s[i]
		size := 1
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			switch c {
			case '"':
				esc = `\"`
			case '\\':
				esc = `\\`
			case '\b':
				esc = `\b`
			case '\f':
				esc = `\f`
			case '\n':
				esc = `\n`
			case '\r':
				esc = `\r`
			case '\t':
				esc = `\t`
			default:
				esc = `\u00` + string(hex[c>>4]) + string(hex[c&0xf])
			}
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				esc = `\ufffd`
			case r == '\u2028':
				esc = `\u2028`
			case r == '\u2029':
				esc = `\u2029`
			default:
				i += size
				continue
			}
		}
		put(s[start:i])
		put(esc)
		i += size
		start = i
	}
	put(s[start:])
}

func withSplices(ctx context.Context, s *splices) context.Context {
	return context.WithValue(ctx, splicesKey{}, s)
}
