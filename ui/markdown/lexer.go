package markdown

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/dlclark/regexp2/v2"
	"github.com/dlclark/regexp2/v2/helpers"
	"github.com/dlclark/regexp2/v2/syntax"
)

// quickLexer runs a chroma RegexLexer's own rules as chroma's
// LexerState.Iterator does, token for token, with one difference: a rule
// whose pattern cannot begin with the rune at the current position is not
// tried, nor one whose matches all begin with words none of which begins
// the text there (startFilter). Chroma tries each rule of the state in
// turn with a regexp2 call (an identifier in Go code fails some twenty
// rules before the one that takes it), and those calls were half of a
// long reply's server CPU; the set of runes a pattern can begin with is
// regexp2's own (the one it uses to skip ahead in an unanchored search),
// so a rule that is skipped is one whose regexp would have failed.
// TestQuickLexerAsChroma compares the tokens with chroma's for every
// lexer's test file.
//
// Nested lexing (UsingSelf, Using and the like) still goes through chroma.
type quickLexer struct {
	lexer  *chroma.RegexLexer
	rules  chroma.CompiledRules
	states map[string]*quickRules
}

// quickRules are a state's rules with the ones to try for each rune.
type quickRules struct {
	rules []*chroma.CompiledRule
	// ascii holds, for each ASCII rune, the indices of the rules whose
	// match may begin with it, in order.
	ascii [128][]int
	// first is each rule's set of first runes, nil where the pattern may
	// begin with anything or match empty.
	first []*syntax.Prefix
	// starts is what each rule's match must look like where it begins
	// (startFilter), nil where nothing is known.
	starts []*startFilter
}

// newQuickLexer compiles l's rules as chroma does (RegexLexer.maybeCompile)
// and works out each pattern's first runes, or says false when l is not a
// plain RegexLexer.
func newQuickLexer(l chroma.Lexer) (*quickLexer, bool) {
	rl, ok := l.(*chroma.RegexLexer)
	// Raku's lexer replaces rules while it lexes, and only it reads
	// LexerState.NamedGroups (through its own code and ByGroupNames),
	// which quickLexer leaves empty.
	if !ok || rl.Config().Name == "Raku" {
		return nil, false
	}
	raw, err := rl.Rules()
	if err != nil {
		return nil, false
	}
	cfg := rl.Config()
	flags := ""
	if !cfg.NotMultiline {
		flags += "m"
	}
	if cfg.CaseInsensitive {
		flags += "i"
	}
	if cfg.DotAll {
		flags += "s"
	}
	q := &quickLexer{lexer: rl, rules: chroma.CompiledRules{}, states: map[string]*quickRules{}}
	first := map[*chroma.CompiledRule]*syntax.Prefix{}
	starts := map[*chroma.CompiledRule]*startFilter{}
	for state, rules := range raw {
		q.rules[state] = nil
		for _, rule := range rules {
			q.rules[state] = append(q.rules[state], &chroma.CompiledRule{Rule: rule})
		}
	}
	for _, rules := range q.rules {
		for _, rule := range rules {
			pattern := "(?:" + rule.Pattern + ")"
			if flags != "" {
				pattern = "(?" + flags + ")" + pattern
			}
			starts[rule] = newStartFilter(pattern)
			pattern = `\G` + pattern
			re, err := regexp2.Compile(pattern)
			if err != nil {
				return nil, false
			}
			re.MatchTimeout = 250 * time.Millisecond
			rule.Regexp = re
			first[rule] = firstRunes(pattern)
		}
	}
restart:
	seen := map[chroma.LexerMutator]bool{}
	for state := range q.rules {
		for i := range len(q.rules[state]) {
			rule := q.rules[state][i]
			if compile, ok := rule.Mutator.(chroma.LexerMutator); ok {
				if seen[compile] {
					return nil, false
				}
				seen[compile] = true
				if err := compile.MutateLexer(q.rules, state, i); err != nil {
					return nil, false
				}
				goto restart
			}
		}
	}
	for state, rules := range q.rules {
		qr := &quickRules{rules: rules, first: make([]*syntax.Prefix, len(rules)), starts: make([]*startFilter, len(rules))}
		for i, rule := range rules {
			qr.starts[i] = starts[rule] // nil for a rule a mutator made
			fc, ok := first[rule]
			if !ok { // made by a mutator: tried at every rune
				fc = nil
			}
			qr.first[i] = fc
			for r := range rune(128) {
				if mayBegin(fc, r) {
					qr.ascii[r] = append(qr.ascii[r], i)
				}
			}
		}
		q.states[state] = qr
	}
	return q, true
}

// firstRunes is the set of runes a match of pattern can begin with, as
// regexp2 computes it for its own search; nil when it may be any rune or
// the pattern may match empty.
func firstRunes(pattern string) *syntax.Prefix {
	tree, err := syntax.Parse(pattern, syntax.ParseOptions{})
	if err != nil {
		return nil
	}
	code, err := syntax.Write(tree)
	if err != nil || code.FcPrefix == nil {
		return nil
	}
	code.PrepareCharSetASCIIBitmaps()
	return code.FcPrefix
}

// A startFilter is the words one of which begins every match of a
// pattern, when its matches all begin with a literal (case-sensitive)
// word: a keyword rule such as (break|case|chan|const)\b begins with c,
// like the identifier compute, but none of its words is compute's prefix,
// so the rule is not tried there. quickRules' first runes already skip
// the rules that cannot begin with the rune at hand; this skips most of
// the rest that an identifier used to try (Go's four keyword, type and
// builtin rules for each c or s). regexp2's own analysis for its unanchored
// search (FindOptimizations) stops at 16 words and, with the analysis its
// code generator gets, gave (\s|.) the start [^\n\s], which refused a
// space (TestQuickLexerAsChroma caught it on gherkin): prefixes works the
// words out of the parse tree itself.
type startFilter struct {
	words map[rune][][]rune // by first rune
}

// newStartFilter analyses pattern (without its \G), or returns nil when
// its matches do not all begin with a word it knows.
func newStartFilter(pattern string) *startFilter {
	tree, err := syntax.Parse(pattern, syntax.ParseOptions{})
	if err != nil {
		return nil
	}
	words, _, ok := prefixes(tree.Root)
	if !ok || len(words) == 0 {
		return nil
	}
	f := &startFilter{words: map[rune][][]rune{}}
	for _, w := range words {
		if w == "" {
			return nil // a match may begin with anything
		}
		r := []rune(w)
		f.words[r[0]] = append(f.words[r[0]], r)
	}
	return f
}

// Bounds of prefixes' work: words stop growing at maxWord runes, and a
// pattern of more than maxWords of them gets no filter.
const (
	maxWord  = 16
	maxWords = 512
)

// prefixes lists words of which one begins every match of n, and says
// whether n matches exactly those words (so that what follows n in a
// concatenation continues them); ok is false when n's matches may begin
// in ways it cannot list (a set, a case-insensitive letter, a loop that
// may run no times).
func prefixes(n *syntax.RegexNode) (words []string, exact, ok bool) {
	if n.Options&(syntax.IgnoreCase|syntax.RightToLeft) != 0 {
		return nil, false, false
	}
	switch n.T {
	case syntax.NtOne:
		return []string{string(n.Ch)}, true, true
	case syntax.NtMulti:
		return []string{string(n.Str)}, true, true
	case syntax.NtOneloop, syntax.NtOnelazy, syntax.NtOneloopatomic:
		if n.M < 1 {
			return nil, false, false
		}
		return []string{string(n.Ch)}, n.M == 1 && n.N == 1, true
	case syntax.NtEmpty, syntax.NtBol, syntax.NtEol, syntax.NtBoundary, syntax.NtNonboundary, syntax.NtECMABoundary,
		syntax.NtNonECMABoundary, syntax.NtBeginning, syntax.NtStart, syntax.NtEndZ, syntax.NtEnd,
		syntax.NtPosLook, syntax.NtNegLook, syntax.NtUpdateBumpalong:
		return []string{""}, true, true // they match no text of their own
	case syntax.NtCapture, syntax.NtGroup, syntax.NtAtomic:
		return prefixes(n.Children[0])
	case syntax.NtLoop, syntax.NtLazyloop:
		if n.M < 1 {
			return nil, false, false
		}
		words, _, ok := prefixes(n.Children[0])
		return words, false, ok
	case syntax.NtAlternate:
		exact = true
		for _, c := range n.Children {
			w, e, ok := prefixes(c)
			if !ok || len(words)+len(w) > maxWords {
				return nil, false, false
			}
			words, exact = append(words, w...), exact && e
		}
		return words, exact, true
	case syntax.NtConcatenate:
		words, exact = []string{""}, true
		for _, c := range n.Children {
			w, e, ok := prefixes(c)
			if !ok || len(words)*len(w) > maxWords {
				return words, false, true
			}
			var next []string
			for _, a := range words {
				for _, b := range w {
					next = append(next, a+b)
				}
			}
			words = next
			if !e || slices.ContainsFunc(words, func(w string) bool { return utf8.RuneCountInString(w) >= maxWord }) {
				return words, false, true
			}
		}
		return words, exact, true
	}
	return nil, false, false
}

// allows says whether a match may begin at text[pos:]; nil allows all.
func (f *startFilter) allows(text []rune, pos int) bool {
	if f == nil {
		return true
	}
	for _, w := range f.words[text[pos]] {
		if helpers.StartsWith(text[pos:], w) {
			return true
		}
	}
	return false
}

// mayBegin says whether a match whose first runes are fc can begin with r.
func mayBegin(fc *syntax.Prefix, r rune) bool {
	if fc == nil {
		return true
	}
	if fc.PrefixSet.CharIn(r) {
		return true
	}
	// Sets of case-insensitive patterns are folded when compiled; both
	// cases are tried so that a skip never depends on it.
	return fc.CaseInsensitive && (fc.PrefixSet.CharIn(unicode.ToLower(r)) || fc.PrefixSet.CharIn(unicode.ToUpper(r)))
}

// Tokenise is chroma's RegexLexer.Tokenise with the default options (state
// "root", line ends made \n).
func (q *quickLexer) Tokenise(text string) chroma.Iterator {
	text = lineEnds.Replace(text)
	newlineAdded := false
	if q.lexer.Config().EnsureNL && !strings.HasSuffix(text, "\n") {
		text += "\n"
		newlineAdded = true
	}
	s := &quickState{q: q, newlineAdded: newlineAdded, l: &chroma.LexerState{
		Registry:       lexers.GlobalLexerRegistry,
		Lexer:          q.lexer,
		Text:           []rune(text),
		Stack:          []string{"root"},
		Rules:          q.rules,
		MutatorContext: map[any]any{},
	}}
	return s.next
}

// lineEnds makes \r\n and \r \n, as chroma's EnsureLF option does.
var lineEnds = strings.NewReplacer("\r\n", "\n", "\r", "\n")

type quickState struct {
	q            *quickLexer
	l            *chroma.LexerState
	stack        []chroma.Iterator
	newlineAdded bool
}

// next is chroma's LexerState.Iterator with quickLexer's rule matching.
func (s *quickState) next() chroma.Token {
	l := s.l
	end := len(l.Text)
	if s.newlineAdded {
		end--
	}
	for l.Pos < end && len(l.Stack) > 0 {
		for len(s.stack) > 0 {
			n := len(s.stack) - 1
			t := s.stack[n]()
			if t.Type == chroma.Ignore {
				continue
			}
			if t == chroma.EOF {
				s.stack = s.stack[:n]
				continue
			}
			return t
		}
		l.State = l.Stack[len(l.Stack)-1]
		selected, ok := s.q.states[l.State]
		if !ok {
			panic("unknown state " + l.State)
		}
		index, rule, groups := selected.match(l.Text, l.Pos)
		if groups == nil {
			if l.Text[l.Pos] == '\n' && l.State != "root" {
				l.Stack = []string{"root"}
				continue
			}
			l.Pos++
			return chroma.Token{Type: chroma.Error, Value: string(l.Text[l.Pos-1 : l.Pos])}
		}
		l.Rule = index
		l.Groups = groups
		l.Pos += utf8.RuneCountInString(groups[0])
		if rule.Mutator != nil {
			if err := rule.Mutator.Mutate(l); err != nil {
				panic(err)
			}
		}
		// A plain token type emits one token of the whole match
		// (TokenType.Emit); it is returned as is, not through an iterator.
		if t, ok := rule.Type.(chroma.TokenType); ok && t != chroma.Ignore && t != chroma.EOFType {
			return chroma.Token{Type: t, Value: groups[0]}
		}
		if rule.Type != nil {
			s.stack = append(s.stack, rule.Type.Emit(l.Groups, l))
		}
	}
	for len(s.stack) > 0 {
		n := len(s.stack) - 1
		t := s.stack[n]()
		if t.Type == chroma.Ignore {
			continue
		}
		if t == chroma.EOF {
			s.stack = s.stack[:n]
			continue
		}
		return t
	}
	if l.Pos != len(l.Text) && len(l.Stack) == 0 {
		value := string(l.Text[l.Pos:])
		l.Pos = len(l.Text)
		return chroma.Token{Type: chroma.Error, Value: value}
	}
	return chroma.EOF
}

// match is chroma's matchRules, skipping the rules that cannot begin with
// the rune at pos. It leaves out the named groups, which nothing but
// Raku's lexer reads.
func (qr *quickRules) match(text []rune, pos int) (int, *chroma.CompiledRule, []string) {
	try := func(i int) []string {
		m, err := qr.rules[i].Regexp.FindRunesMatchStartingAt(text, pos)
		if m == nil || err != nil || m.RuneIndex != pos {
			return nil
		}
		if m.GroupCount() == 1 {
			return []string{m.String()}
		}
		gs := m.Groups()
		groups := make([]string, len(gs))
		for j, g := range gs {
			groups[j] = g.String()
		}
		return groups
	}
	if r := text[pos]; r >= 0 && r < 128 {
		for _, i := range qr.ascii[r] {
			if !qr.starts[i].allows(text, pos) {
				continue
			}
			if groups := try(i); groups != nil {
				return i, qr.rules[i], groups
			}
		}
	} else {
		for i, fc := range qr.first {
			if mayBegin(fc, r) && qr.starts[i].allows(text, pos) {
				if groups := try(i); groups != nil {
					return i, qr.rules[i], groups
				}
			}
		}
	}
	return 0, &chroma.CompiledRule{}, nil
}

// coalesce is chroma.Coalesce's iterator: runs of one token type become
// one token (of at most about 8 KiB), and empty tokens go.
func coalesce(it chroma.Iterator) chroma.Iterator {
	var prev chroma.Token
	return func() chroma.Token {
		for token := it(); token != chroma.EOF; token = it() {
			if len(token.Value) == 0 {
				continue
			}
			if prev == chroma.EOF {
				prev = token
			} else {
				if prev.Type == token.Type && len(prev.Value) < 8192 {
					prev.Value += token.Value
				} else {
					out := prev
					prev = token
					return out
				}
			}
		}
		out := prev
		prev = chroma.EOF
		return out
	}
}
