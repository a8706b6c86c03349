package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"

	"parley/agentcore"
)

// A message list is written to its response one message at a time, and a
// message's texts and raw values (arguments, results) of at least
// apiSpliceFrom bytes straight from the message, in pieces: encoded whole,
// a reply of N bytes, whose text the response holds twice (the text part
// and content.content), grew encoding/json's buffer to several times N
// before a byte was sent. The bytes are those encoding/json writes.
const (
	apiSpliceFrom = 64 << 10
	// apiWriteChunk is how much of a big text is encoded at a time.
	apiWriteChunk = 32 << 10
)

// streamedJSON is a response body that writes itself, as writeJSON would
// encode it, without being built in memory first.
type streamedJSON interface {
	writeJSON(w io.Writer) error
}

// contentMessage is a message of a list: what its content is.
type contentMessage interface {
	content() *agentcore.Content
}

func (m *apiMessage) content() *agentcore.Content { return &m.Message.Content }

// messageList is GET …/messages' body, {messages, uiMessages, total, page,
// perPage, hasMore}, written message by message.
type messageList struct {
	msgs []contentMessage // *apiMessage or *apiTreeMessage
	page page
}

func (l messageList) writeJSON(w io.Writer) error {
	frame, err := json.Marshal(struct {
		Messages   []struct{} `json:"messages"`
		UIMessages []any      `json:"uiMessages"`
		page
	}{[]struct{}{}, nil, l.page})
	if err != nil {
		return err
	}
	at := bytes.Index(frame, []byte(`[]`)) + 1
	bw := bufio.NewWriterSize(w, apiWriteChunk)
	bw.Write(frame[:at])
	for i, m := range l.msgs {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := writeMessage(bw, m, apiSpliceFrom); err != nil {
			return err
		}
	}
	bw.Write(frame[at:])
	bw.WriteByte('\n') // as json.Encoder ends a value
	return bw.Flush()
}

// writeMessage writes m as json.Marshal encodes it, its big values
// (apiSpliceFrom) written from m in pieces.
func writeMessage(w *bufio.Writer, m contentMessage, from int) error {
	c := m.content()
	orig := *c
	small, big := spliceAPIContent(orig, from)
	if len(big) == 0 {
		return writeMarshalled(w, m)
	}
	*c = small
	b, err := json.Marshal(m)
	*c = orig
	if err != nil {
		return writeMarshalled(w, m)
	}
	pieces, ok := splicedPieces(b, big)
	if !ok {
		return writeMarshalled(w, m)
	}
	return writeSpliced(w, b, big, pieces)
}

// splicePiece is where a marker is in JSON, and which big value it
// stands for.
type splicePiece struct{ at, end, big int }

// splicedPieces are the markers of b, JSON with a marker in place of each
// of big; false when they are not each of big's once (a value held a
// marker of its own): then the caller encodes the ordinary way.
func splicedPieces(b []byte, big []bigValue) ([]splicePiece, bool) {
	var pieces []splicePiece
	used := make([]bool, len(big))
	for at := 0; ; {
		j := bytes.Index(b[at:], []byte(apiQuotedMark))
		if j < 0 {
			break
		}
		at += j
		k := at + len(apiQuotedMark)
		e := bytes.Index(b[k:], []byte(`\u0000"`))
		if e < 0 {
			return nil, false
		}
		i, err := strconv.Atoi(string(b[k : k+e]))
		if err != nil || i < 0 || i >= len(big) || used[i] {
			return nil, false
		}
		used[i] = true
		end := k + e + len(`\u0000"`)
		pieces = append(pieces, splicePiece{at, end, i})
		at = end
	}
	return pieces, len(pieces) == len(big)
}

// writeSpliced writes b with big's values where pieces says their markers
// are.
func writeSpliced(w *bufio.Writer, b []byte, big []bigValue, pieces []splicePiece) error {
	last := 0
	for _, p := range pieces {
		w.Write(b[last:p.at])
		if v := big[p.big]; v.raw != nil {
			writeCompactHTML(w, v.raw)
		} else if err := writeQuotedHTML(w, v.text); err != nil {
			return err
		}
		last = p.end
	}
	_, err := w.Write(b[last:])
	return err
}

func writeMarshalled(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// apiMark begins the marker of a big value (then its number and a NUL);
// apiQuotedMark is how it is encoded.
const (
	apiMark       = "\x00parley-splice-"
	apiQuotedMark = `"\u0000parley-splice-`
)

// bigValue is a text, or a raw JSON value, written by itself.
type bigValue struct {
	text string
	raw  json.RawMessage
}

// spliceAPIContent is c with markers in place of its values of at least
// from bytes (a copy: c is not changed), and those values by marker
// number. Raw values that are not valid JSON are left in place: encoding
// them fails as it did.
func spliceAPIContent(c agentcore.Content, from int) (agentcore.Content, []bigValue) {
	var big []bigValue
	mark := func(v bigValue) string {
		big = append(big, v)
		return apiMark + strconv.Itoa(len(big)-1) + "\x00"
	}
	str := func(s *string) {
		if len(*s) >= from {
			*s = mark(bigValue{text: *s})
		}
	}
	raw := func(r *json.RawMessage) {
		if len(*r) >= from && json.Valid(*r) {
			q, _ := json.Marshal(mark(bigValue{raw: *r}))
			*r = q
		}
	}
	str(&c.Content)
	var parts []agentcore.Part
	for i, p := range c.Parts {
		q := p
		str(&q.Text)
		if ti := p.ToolInvocation; ti != nil {
			t := *ti
			str(&t.ArgsText)
			str(&t.Progress)
			str(&t.ModelOutput)
			raw(&t.Args)
			raw(&t.Result)
			if !sameInvocation(t, *ti) {
				q.ToolInvocation = &t
			}
		}
		if q != p && parts == nil {
			parts = make([]agentcore.Part, len(c.Parts))
			copy(parts, c.Parts)
		}
		if parts != nil {
			parts[i] = q
		}
	}
	if parts != nil {
		c.Parts = parts
	}
	return c, big
}

// sameInvocation: a and b hold the same spliceable values (a is a copy of
// b, with markers where they were big).
func sameInvocation(a, b agentcore.ToolInvocation) bool {
	return a.ArgsText == b.ArgsText && a.Progress == b.Progress && a.ModelOutput == b.ModelOutput &&
		bytes.Equal(a.Args, b.Args) && bytes.Equal(a.Result, b.Result)
}

// writeQuotedHTML writes s as encoding/json encodes a string (HTML
// escaped), apiWriteChunk at a time through one reused buffer
// (appendQuotedHTML), cut where no character, valid or not, spans the cut.
// Not through encoding/json's own encoder: its buffers come from a
// sync.Pool, which the race detector empties at random, so the bound on
// what a big reply allocates would hold only outside -race.
func writeQuotedHTML(w *bufio.Writer, s string) error {
	buf := make([]byte, 0, apiWriteChunk+apiWriteChunk/8)
	w.WriteByte('"')
	for len(s) > 0 {
		n := min(len(s), apiWriteChunk)
		// A cut before a byte that starts a character, or after three
		// continuation bytes (no character began within reach of it).
		for k := 0; n < len(s) && k < utf8.UTFMax-1 && !utf8.RuneStart(s[n]); k++ {
			n++
		}
		buf = appendQuotedHTML(buf[:0], s[:n])
		w.Write(buf)
		s = s[n:]
	}
	return w.WriteByte('"')
}

// appendQuotedHTML appends the inside of s as encoding/json quotes a
// string with HTML escaping: \" and \\, the short escapes \b \f \n \r \t,
// \u00XX for the other control bytes and for <, > and &, \ufffd for each
// byte of invalid UTF-8, \u2028 and \u2029 (FuzzWriteMessage compares
// it with encoding/json's output).
func appendQuotedHTML(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// writeCompactHTML writes raw, valid JSON, as encoding/json writes a
// RawMessage: compacted (no space between tokens), with <, >, &, U+2028
// and U+2029 escaped.
func writeCompactHTML(w *bufio.Writer, raw []byte) {
	const hex = "0123456789abcdef"
	inString, escaped := false, false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			w.Write(raw[start:i])
			w.Write([]byte{'\\', 'u', '0', '0', hex[c>>4], hex[c&0xF]})
			start = i + 1
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			w.Write(raw[start:i])
			w.Write([]byte{'\\', 'u', '2', '0', '2', hex[raw[i+2]&0xF]})
			start = i + 3
			i += 2
			continue
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if start <= i {
				w.Write(raw[start:i])
				start = i + 1
			}
		}
	}
	if start < len(raw) {
		w.Write(raw[start:])
	}
}
