// Package partialjson parses JSON text while it streams in, so the UI can
// preview a tool call's arguments before the model has finished writing them.
//
// A Parser consumes each byte once. Write feeds a delta; the value so far is
// kept as a tree whose strings grow in place, so the total work is linear in
// the bytes fed. Value costs O(number of values) and never re-scans the text;
// Changed and String cost O(1) amortised per call (plus the keys reported),
// which is what a preview pays per delta.
//
// The value of an incomplete document is what npm partial-json 0.1.7 returns
// for it with Allow.ALL — Mastra Code runs that on the accumulated text after
// every delta (shared/spec/mastra-behaviour.md §2.4):
//
//   - An unterminated string is its prefix. A trailing lone backslash or an
//     unfinished escape such as \u12 is left out.
//   - An object holds its members so far. A key whose value has not started is
//     left out, and so is a value that cannot be shown yet (a number such as
//     "-" or "12."); while it cannot, an earlier member with the same key
//     shows through. An unterminated string value is kept as its prefix.
//   - An array holds its elements so far; the last one may be partial.
//   - A prefix of null, true or false is that literal ("tr" is true). npm
//     also accepts the JavaScript literals NaN, Infinity and -Infinity, and
//     their prefixes; they become math.NaN() and math.Inf(±1).
//   - A number is parsed as far as it goes: "1.5e" and "1.5e+" are 1.5 (npm
//     cuts at a trailing lowercase e). "-", "12." and "1E" are not numbers yet:
//     inside a container they are left out; at top level, where npm throws
//     MalformedJSON, Value returns ErrMalformed.
//   - Numbers are float64 (±Inf when out of range, as in JavaScript).
//
// Where this parser differs from npm, it does so on text that is not a prefix
// of any valid JSON, or to fix npm's bugs: npm swallows errors inside
// containers, skips missing commas and colons, accepts trailing commas and
// trailing text, and misreads an empty array with whitespace inside ("[ ]").
// Here the first byte that no valid continuation can follow makes the parser
// fail with ErrMalformed, and it stays failed.
//
// Strings are Go strings, so two things npm never sees are handled the way a
// stream needs: an incomplete UTF-8 sequence at the end, and a \uD83D waiting
// for its low surrogate, are left out until they complete. Invalid UTF-8 and
// unpaired surrogates become U+FFFD exactly as encoding/json decodes them, so
// the Value of a complete document equals json.Unmarshal into an any.
//
// A Parser is not safe for concurrent use.
package partialjson

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

var (
	// ErrIncomplete means no value has started yet: the text so far is empty
	// or whitespace.
	ErrIncomplete = errors.New("partialjson: no value yet")
	// ErrMalformed means the text cannot be shown as JSON. Returned errors wrap
	// it with the reason and byte offset.
	ErrMalformed = errors.New("partialjson: malformed JSON")
)

// indexThreshold is the member count above which an object keeps a map from
// key to member; tool arguments have a handful of fields, where a linear scan
// is faster than hashing.
const indexThreshold = 16

// Parser is an incremental partial-JSON parser. The zero value is not ready
// for use; call New.
type Parser struct {
	root  *node
	stack []*node // open containers, innermost last
	st    state
	cur   *node // the string, number or literal being read; nil for a key
	err   error
	off   int // bytes consumed before the current Write

	// Object keys are decoded into keyBuf; key holds the last one read until
	// its value starts.
	inKey  bool
	keyBuf strings.Builder
	key    string

	// String decoding state that is not visible yet.
	esc  uint8 // 0: none; 1: after '\'; 2–5: reading the 4 hex digits of \u
	hex  rune
	high rune // a high surrogate waiting for its low half; 0 if none
	u8   [utf8.UTFMax]byte
	u8n  int // bytes of an incomplete UTF-8 sequence in u8

	// Changed bookkeeping. field is the top-level member whose value is being
	// read; every visible change below it marks it dirty.
	field *member
	dirty []*member
}

type state uint8

const (
	stValue      state = iota // a value must start: top level, after ':', after ',' in an array
	stArrFirst                // after '[': a value or ']'
	stObjFirst                // after '{': a key or '}'
	stKey                     // after ',' in an object: a key
	stColon                   // after a key
	stAfterValue              // after a value in a container: ',' or the closing bracket
	stString
	stNumber
	stLiteral
	stDone // the top-level value is complete: only whitespace may follow
)

type kind uint8

const (
	kindObject kind = iota
	kindArray
	kindString
	kindNumber
	kindLiteral
)

// node is one value of the tree. Strings are append-only, so a string handed
// out by String or Value stays valid and unchanged while the node grows.
type node struct {
	kind kind

	members []*member          // object, in order of first appearance
	index   map[string]*member // object with more than indexThreshold members
	items   []*node            // array

	str strings.Builder // string: decoded content so far

	num      []byte   // number: its text so far
	nst      numState // number: grammar state after num
	mant     int      // number: length of the mantissa once an exponent marker is read
	expLower bool     // number: the exponent marker is 'e', which npm cuts at

	lit     *literal // literal
	matched int      // literal: bytes of lit.text read
}

// member is one key of an object. A repeated key keeps its first position and
// takes the latest value, as in JavaScript and encoding/json.
type member struct {
	key   string
	val   *node // the latest value
	prev  *node // the value of an earlier member with this key, shown while val cannot be
	idx   int   // position among the object's members
	dirty bool  // top level only: changed since the last call to Changed
}

// shown is the member's value as it appears, or nil if it does not.
func (m *member) shown() *node {
	if m.val.visible() {
		return m.val
	}
	return m.prev
}

type literal struct {
	text  string
	value any
}

var literals = []*literal{
	{"null", nil},
	{"true", true},
	{"false", false},
	{"NaN", math.NaN()},
	{"Infinity", math.Inf(1)},
	{"-Infinity", math.Inf(-1)},
}

// New returns a parser waiting for the first byte of a document.
func New() *Parser { return &Parser{} }

// WriteString feeds the next delta of the document; see Write.
func (p *Parser) WriteString(s string) (int, error) { return p.Write([]byte(s)) }

// Write feeds the next delta of the document. It returns an error wrapping
// ErrMalformed at the first byte that cannot continue valid JSON; from then on
// the parser stays failed. Write never retains b.
func (p *Parser) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch p.st {
		case stString:
			// Runs of plain text, the bulk of a file being written, are
			// copied in one go.
			if p.esc == 0 && p.u8n == 0 {
				if j := plainRun(b, i); j > i {
					p.emit(b[i:j])
					i = j
					continue
				}
			}
			if !p.stringByte(c) {
				return i, p.fail(i, c, "in string")
			}
			i++
		case stNumber:
			consumed, ok := p.numberByte(c)
			if !ok {
				return i, p.fail(i, c, "after number "+strconv.Quote(string(p.cur.num)))
			}
			if consumed {
				i++
			} // else the number ended before c, which the enclosing state reads
		case stLiteral:
			n := p.cur
			if c != n.lit.text[n.matched] {
				return i, p.fail(i, c, "in literal "+n.lit.text)
			}
			if n.matched++; n.matched == len(n.lit.text) {
				p.valueDone()
			}
			i++
		default:
			if isSpace(c) {
				i++
				continue
			}
			if !p.structural(c) {
				return i, p.fail(i, c, p.st.expecting())
			}
			i++
		}
	}
	p.off += len(b)
	return len(b), nil
}

func (p *Parser) fail(i int, c byte, where string) error {
	what := strconv.QuoteRune(rune(c))
	if c >= utf8.RuneSelf {
		what = fmt.Sprintf("byte 0x%02x", c)
	}
	p.err = fmt.Errorf("%w: unexpected %s %s at byte %d", ErrMalformed, what, where, p.off+i)
	return p.err
}

func (s state) expecting() string {
	switch s {
	case stValue:
		return "looking for a value"
	case stArrFirst:
		return "looking for a value or ']'"
	case stObjFirst:
		return "looking for a key or '}'"
	case stKey:
		return "looking for a key"
	case stColon:
		return "after object key"
	case stAfterValue:
		return "after value"
	default:
		return "after top-level value"
	}
}

// structural reads one non-space byte between tokens.
func (p *Parser) structural(c byte) bool {
	switch p.st {
	case stValue:
		return p.startValue(c)
	case stArrFirst:
		if c == ']' {
			p.close()
			return true
		}
		return p.startValue(c)
	case stObjFirst, stKey:
		if c == '}' && p.st == stObjFirst {
			p.close()
			return true
		}
		if c != '"' {
			return false
		}
		p.inKey = true
		p.st = stString
		return true
	case stColon:
		if c != ':' {
			return false
		}
		p.st = stValue
		return true
	case stAfterValue:
		top := p.stack[len(p.stack)-1]
		switch {
		case c == ',' && top.kind == kindArray:
			p.st = stValue
		case c == ',':
			p.st = stKey
		case c == ']' && top.kind == kindArray, c == '}' && top.kind == kindObject:
			p.close()
		default:
			return false
		}
		return true
	}
	return false // stDone
}

// startValue reads the first byte of a value and attaches its node.
func (p *Parser) startValue(c byte) bool {
	n := &node{}
	switch {
	case c == '{':
		n.kind = kindObject
	case c == '[':
		n.kind = kindArray
	case c == '"':
		n.kind = kindString
	case c == '-' || isDigit(c):
		n.kind = kindNumber
		n.advance(c)
	default:
		for _, l := range literals {
			if l.text[0] == c {
				n.kind, n.lit, n.matched = kindLiteral, l, 1
				break
			}
		}
		if n.lit == nil {
			return false
		}
	}
	p.attach(n)
	switch n.kind {
	case kindObject:
		p.stack = append(p.stack, n)
		p.st = stObjFirst
	case kindArray:
		p.stack = append(p.stack, n)
		p.st = stArrFirst
	case kindString:
		p.cur, p.st = n, stString
	case kindNumber:
		p.cur, p.st = n, stNumber
	case kindLiteral:
		p.cur, p.st = n, stLiteral
	}
	return true
}

// attach adds a value that has just started to its container.
func (p *Parser) attach(n *node) {
	if len(p.stack) == 0 {
		p.root = n
		return
	}
	parent := p.stack[len(p.stack)-1]
	if parent.kind == kindArray {
		parent.items = append(parent.items, n)
	} else {
		m := parent.member(p.key)
		if m == nil {
			m = parent.addMember(p.key)
		} else {
			m.prev = m.shown()
		}
		m.val = n
		if parent == p.root {
			p.field = m
		}
	}
	if n.visible() {
		p.touch()
	}
}

func (p *Parser) close() {
	p.stack = p.stack[:len(p.stack)-1]
	p.valueDone()
}

// valueDone moves on after a value has ended.
func (p *Parser) valueDone() {
	p.cur = nil
	if len(p.stack) == 0 {
		p.st = stDone
	} else {
		p.st = stAfterValue
	}
}

// touch records a visible change inside the current top-level member.
func (p *Parser) touch() {
	if f := p.field; f != nil && !p.inKey && !f.dirty {
		f.dirty = true
		p.dirty = append(p.dirty, f)
	}
}

// numberByte reads c while in a number. consumed is false when the number
// ended before c; ok is false when c cannot follow.
func (p *Parser) numberByte(c byte) (consumed, ok bool) {
	n := p.cur
	if n.nst == numMinus && c == 'I' {
		n.kind, n.lit, n.matched = kindLiteral, literals[len(literals)-1], 2
		p.st = stLiteral
		p.touch()
		return true, true
	}
	was := n.visible()
	if n.advance(c) {
		// A digit changes the value; '.', 'E' and the like change whether
		// it shows at all.
		if now := n.visible(); now != was || now && isDigit(c) {
			p.touch()
		}
		return true, true
	}
	if !n.nst.complete() {
		return false, false
	}
	p.valueDone()
	return false, true
}

// stringByte reads one byte of a string that the plain-run fast path did not.
func (p *Parser) stringByte(c byte) bool {
	if p.u8n > 0 && c&0xC0 != 0x80 {
		p.flushUTF8() // a multi-byte sequence cut short: encoding/json gives U+FFFD per byte
	}
	switch p.esc {
	case 0:
		switch {
		case c == '"':
			p.endString()
		case c == '\\':
			p.esc = 1
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			p.emitByte(c)
		default:
			p.u8[p.u8n] = c
			p.u8n++
			if utf8.FullRune(p.u8[:p.u8n]) {
				if r, size := utf8.DecodeRune(p.u8[:p.u8n]); r == utf8.RuneError && size == 1 {
					p.flushUTF8()
				} else {
					p.emit(p.u8[:p.u8n])
					p.u8n = 0
				}
			}
		}
	case 1:
		if c == 'u' {
			p.esc, p.hex = 2, 0
			return true
		}
		r, ok := unescape(c)
		if !ok {
			return false
		}
		p.esc = 0
		p.emitByte(r)
	default:
		h, ok := unhex(c)
		if !ok {
			return false
		}
		p.hex = p.hex<<4 | h
		if p.esc++; p.esc == 6 {
			p.esc = 0
			p.unicode(p.hex)
		}
	}
	return true
}

// unicode takes the rune of a complete \u escape, pairing surrogates the way
// encoding/json does.
func (p *Parser) unicode(r rune) {
	switch {
	case p.high != 0 && 0xDC00 <= r && r <= 0xDFFF:
		p.out().WriteRune(utf16.DecodeRune(p.high, r))
		p.high = 0
		p.touch()
	case 0xD800 <= r && r <= 0xDBFF:
		p.flushHigh()
		p.high = r
	case 0xDC00 <= r && r <= 0xDFFF:
		p.emitRune(utf8.RuneError)
	default:
		p.emitRune(r)
	}
}

func (p *Parser) endString() {
	p.flushHigh()
	if !p.inKey {
		p.valueDone()
		return
	}
	p.key = p.keyBuf.String()
	p.keyBuf.Reset() // the key keeps the old buffer; the next key gets a new one
	p.inKey = false
	p.st = stColon
}

// out is where decoded string content goes.
func (p *Parser) out() *strings.Builder {
	if p.inKey {
		return &p.keyBuf
	}
	return &p.cur.str
}

// flushHigh writes a pending high surrogate that found no low half.
func (p *Parser) flushHigh() {
	if p.high != 0 {
		p.high = 0
		p.out().WriteRune(utf8.RuneError)
		p.touch()
	}
}

func (p *Parser) flushUTF8() {
	for range p.u8n {
		p.emitRune(utf8.RuneError)
	}
	p.u8n = 0
}

func (p *Parser) emit(b []byte) {
	p.flushHigh()
	p.out().Write(b)
	p.touch()
}

func (p *Parser) emitByte(c byte) {
	p.flushHigh()
	p.out().WriteByte(c)
	p.touch()
}

func (p *Parser) emitRune(r rune) {
	p.flushHigh()
	p.out().WriteRune(r)
	p.touch()
}

// plainRun returns the end of the run of bytes from i that a string holds as
// they are: no quote, backslash or control byte, and only complete, valid
// UTF-8.
func plainRun(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return i
}

func unescape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

func unhex(c byte) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// numState is the JSON number grammar, one state per position.
type numState uint8

const (
	numStart   numState = iota
	numMinus            // -
	numZero             // 0
	numInt              // 12
	numDot              // 1.
	numFrac             // 1.5
	numExpMark          // 1e
	numExpSign          // 1e+
	numExp              // 1e5
	numBad
)

func (s numState) complete() bool {
	return s == numZero || s == numInt || s == numFrac || s == numExp
}

func (s numState) next(c byte) numState {
	switch {
	case isDigit(c):
		switch s {
		case numStart, numMinus:
			if c == '0' {
				return numZero
			}
			return numInt
		case numInt:
			return numInt
		case numDot, numFrac:
			return numFrac
		case numExpMark, numExpSign, numExp:
			return numExp
		}
	case c == '-' && s == numStart:
		return numMinus
	case c == '.' && (s == numZero || s == numInt):
		return numDot
	case (c == 'e' || c == 'E') && (s == numZero || s == numInt || s == numFrac):
		return numExpMark
	case (c == '+' || c == '-') && s == numExpMark:
		return numExpSign
	}
	return numBad
}

// advance appends c to a number if the grammar allows it.
func (n *node) advance(c byte) bool {
	next := n.nst.next(c)
	if next == numBad {
		return false
	}
	if next == numExpMark {
		n.mant, n.expLower = len(n.num), c == 'e'
	}
	n.num = append(n.num, c)
	n.nst = next
	return true
}

// visible reports whether the value shows: everything but a number that has
// not reached a parseable form.
func (n *node) visible() bool {
	if n.kind != kindNumber {
		return true
	}
	return n.nst.complete() || n.expLower && (n.nst == numExpMark || n.nst == numExpSign)
}

func (n *node) number() float64 {
	text := n.num
	if !n.nst.complete() {
		text = text[:n.mant] // "1.5e+" shows as 1.5
	}
	// The grammar is checked already; the only error left is ErrRange, where
	// ParseFloat returns ±Inf or 0 as JSON.parse does.
	f, _ := strconv.ParseFloat(string(text), 64)
	return f
}

// value builds the Go value of a visible node. Strings share the node's
// buffer, so this costs O(number of values), not O(bytes).
func (n *node) value() any {
	switch n.kind {
	case kindObject:
		m := make(map[string]any, len(n.members))
		for _, mb := range n.members {
			if v := mb.shown(); v != nil {
				m[mb.key] = v.value()
			}
		}
		return m
	case kindArray:
		a := make([]any, 0, len(n.items))
		for _, it := range n.items {
			if it.visible() {
				a = append(a, it.value())
			}
		}
		return a
	case kindString:
		return n.str.String()
	case kindNumber:
		return n.number()
	default:
		return n.lit.value
	}
}

func (n *node) member(key string) *member {
	if n.index != nil {
		return n.index[key]
	}
	for _, m := range n.members {
		if m.key == key {
			return m
		}
	}
	return nil
}

func (n *node) addMember(key string) *member {
	m := &member{key: key, idx: len(n.members)}
	n.members = append(n.members, m)
	switch {
	case n.index != nil:
		n.index[key] = m
	case len(n.members) > indexThreshold:
		n.index = make(map[string]*member, 2*len(n.members))
		for _, mb := range n.members {
			n.index[mb.key] = mb
		}
	}
	return m
}

// Value returns the document so far as Go values: map[string]any, []any,
// string, float64, bool and nil. It returns ErrIncomplete before a value has
// started and an error wrapping ErrMalformed once the text is malformed (or,
// as in npm, while a top-level number is not parseable yet, such as "12.").
//
// Each call builds new maps and slices, O(number of values); strings share
// the parser's buffers and are not copied.
func (p *Parser) Value() (any, error) {
	switch {
	case p.err != nil:
		return nil, p.err
	case p.root == nil:
		return nil, ErrIncomplete
	case !p.root.visible():
		return nil, fmt.Errorf("%w: number %q is not complete", ErrMalformed, p.root.num)
	}
	return p.root.value(), nil
}

// The accessors below read the top-level object. After Write has failed they
// keep reporting the document as it was before the malformed byte, which is
// what a preview should go on showing.

// topMember returns the member of the top-level object with the given key.
func (p *Parser) topMember(key string) *member {
	if p.root == nil || p.root.kind != kindObject {
		return nil
	}
	return p.root.member(key)
}

// Keys returns the keys of the top-level object that have a value so far, in
// document order; nil if the document is not an object.
func (p *Parser) Keys() []string {
	if p.root == nil || p.root.kind != kindObject {
		return nil
	}
	keys := make([]string, 0, len(p.root.members))
	for _, m := range p.root.members {
		if m.shown() != nil {
			keys = append(keys, m.key)
		}
	}
	return keys
}

// Lookup returns the value of a top-level field, built as Value builds it,
// in O(size of that field's value).
func (p *Parser) Lookup(key string) (any, bool) {
	m := p.topMember(key)
	if m == nil {
		return nil, false
	}
	v := m.shown()
	if v == nil {
		return nil, false
	}
	return v.value(), true
}

// String returns the text so far of a top-level string field. It costs O(1):
// the result shares the parser's append-only buffer, which grows by doubling,
// so copying over the whole stream is O(final length). ok is false if the
// field is absent or not a string.
func (p *Parser) String(key string) (s string, ok bool) {
	m := p.topMember(key)
	if m == nil {
		return "", false
	}
	v := m.shown()
	if v == nil || v.kind != kindString {
		return "", false
	}
	return v.str.String(), true
}

// Changed returns, in document order, the top-level fields whose value has
// changed since the previous call: a field that appeared, a string that grew,
// a nested value that changed, and a field that stopped showing (a number
// going from "1" to "1."). It may name a field whose changes cancelled out
// between calls, or whose number gained a digit that does not change its
// float64 value ("1.0" to "1.00"); it never misses a change. It returns nil
// if nothing changed or the document is not an object.
func (p *Parser) Changed() []string {
	if len(p.dirty) == 0 {
		return nil
	}
	// Fields are read in order, so this is sorted already unless a key was
	// repeated.
	slices.SortFunc(p.dirty, func(a, b *member) int { return cmp.Compare(a.idx, b.idx) })
	keys := make([]string, len(p.dirty))
	for i, m := range p.dirty {
		keys[i] = m.key
		m.dirty = false
	}
	p.dirty = p.dirty[:0]
	return keys
}
