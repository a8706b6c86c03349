package partialjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var (
	inf = math.Inf(1)
	nan = math.NaN()
)

func arr(v ...any) []any { return append([]any{}, v...) }

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// TestSpec pins every rule of spec §2.4, and the differences from npm that
// the package documents.
func TestSpec(t *testing.T) {
	tests := []struct {
		name, in string
		want     any
		err      error // ErrIncomplete or ErrMalformed; nil means want
	}{
		{"empty", "", nil, ErrIncomplete},
		{"whitespace only", " \n\r\t", nil, ErrIncomplete},

		// Strings: the prefix is kept.
		{"open quote", `"`, "", nil},
		{"string prefix", `"hello wor`, "hello wor", nil},
		{"lone trailing backslash dropped", `"hello\`, "hello", nil},
		{"escaped backslash kept", `"a\\`, `a\`, nil},
		{"escaped backslash then lone one", `"a\\\`, `a\`, nil},
		{"broken \\u escape cut", `"hello \u12`, "hello ", nil},
		{"bare \\u cut", `"x\u`, "x", nil},
		{"escapes decoded", `"a\"b\n\t\/\u00e9`, "a\"b\n\t/é", nil},
		{"high surrogate waits for its pair", `"a\uD83D`, "a", nil},
		{"high surrogate, pair half written", `"a\uD83D\uDE`, "a", nil},
		{"surrogate pair", `"a\uD83D\uDE00`, "a😀", nil},
		{"unpaired high surrogate then text", `"a\uD83Dx`, "a\uFFFDx", nil},
		{"unpaired high surrogate closed", `"a\uD83D"`, "a\uFFFD", nil},
		{"lone low surrogate", `"\uDE00`, "\uFFFD", nil},
		{"incomplete UTF-8 held back", "\"caf\xc3", "caf", nil},
		{"UTF-8 completed", "\"caf\xc3\xa9", "café", nil},
		{"invalid UTF-8 as encoding/json", "\"a\xff\xc3(", "a\uFFFD\uFFFD(", nil},
		{"closed string", `"done"`, "done", nil},

		// Objects.
		{"open brace", `{`, obj(), nil},
		{"key prefix dropped", `{"pa`, obj(), nil},
		{"key without colon dropped", `{"path"`, obj(), nil},
		{"key without value dropped", `{"path": `, obj(), nil},
		{"string value prefix kept", `{"path":"`, obj("path", ""), nil},
		{"string value grows", `{"path":"a/b`, obj("path", "a/b"), nil},
		{"after comma", `{"path":"a/b", `, obj("path", "a/b"), nil},
		{"second key prefix", `{"path":"a/b","con`, obj("path", "a/b"), nil},
		{"nested", `{"a":{"b":[1,{"c":"d`, obj("a", obj("b", arr(1.0, obj("c", "d")))), nil},
		{"repeated key takes latest", `{"a":1,"a":"x`, obj("a", "x"), nil},
		{"repeated key shows earlier while new one cannot", `{"a":1,"a":-`, obj("a", 1.0), nil},
		{"complete object", `{"a":[ ],"b":{ }}`, obj("a", arr(), "b", obj()), nil},

		// Arrays.
		{"open bracket", `[`, arr(), nil},
		{"items so far", `[1, 2,`, arr(1.0, 2.0), nil},
		{"partial string item", `[1,"ab`, arr(1.0, "ab"), nil},
		{"partial object item", `[{"a":1},{"b`, arr(obj("a", 1.0), obj()), nil},
		{"nested open", `[[`, arr(arr()), nil},
		{"minus item dropped", `[1,-`, arr(1.0), nil},
		{"whitespace inside empty array (npm bug)", `{"a":[ ],"b":1}`, obj("a", arr(), "b", 1.0), nil},

		// Literals: a prefix at the end is the literal.
		{"t", `t`, true, nil},
		{"tr", `tr`, true, nil},
		{"fals", `fals`, false, nil},
		{"n in array", `[nu`, arr(nil), nil},
		{"f as value", `{"a":f`, obj("a", false), nil},
		{"NaN prefix", `N`, nan, nil},
		{"Infinity prefix", `Inf`, inf, nil},
		{"-Infinity prefix", `-I`, -inf, nil},
		{"-Infinity in object", `{"a":-Infin`, obj("a", -inf), nil},
		{"Infinity complete", `[Infinity,NaN]`, arr(inf, nan), nil},

		// Numbers.
		{"integer", `12`, 12.0, nil},
		{"negative zero", `[-0`, arr(math.Copysign(0, -1)), nil},
		{"exponent", `-1.25e+4`, -1.25e4, nil},
		{"cut at trailing e", `1.5e`, 1.5, nil},
		{"cut at trailing e+", `-1.25e+`, -1.25, nil},
		{"cut at trailing e-", `{"a":2e-`, obj("a", 2.0), nil},
		{"lone minus at top level (npm: malformed)", `-`, nil, ErrMalformed},
		{"12. at top level (spec: malformed)", `12.`, nil, ErrMalformed},
		{"12. in object dropped", `{"a":12.`, obj(), nil},
		{"12.5 in object", `{"a":12.5`, obj("a", 12.5), nil},
		{"capital E not cut (npm)", `{"a":1E`, obj(), nil},
		{"capital E at top level", `1E+`, nil, ErrMalformed},
		{"number then space", `[1 `, arr(1.0), nil},
		{"out of range is Inf", `[1e400]`, arr(inf), nil},

		// Invalid tokens are errors, not swallowed (npm swallows them in
		// containers).
		{"unquoted key", `{a`, nil, ErrMalformed},
		{"missing colon", `{"a" 1`, nil, ErrMalformed},
		{"missing comma", `[1 2`, nil, ErrMalformed},
		{"trailing comma", `[1,]`, nil, ErrMalformed},
		{"trailing comma in object", `{"a":1,}`, nil, ErrMalformed},
		{"bad literal", `{"a":tx`, nil, ErrMalformed},
		{"partial literal then space", `tr `, nil, ErrMalformed},
		{"bad token", `x`, nil, ErrMalformed},
		{"bad escape", `"\x`, nil, ErrMalformed},
		{"bad \\u escape", `"\u12g`, nil, ErrMalformed},
		{"raw newline in string", "\"a\nb", nil, ErrMalformed},
		{"leading zero", `01`, nil, ErrMalformed},
		{"two dots", `[1.2.`, nil, ErrMalformed},
		{"incomplete number terminated", `[1.]`, nil, ErrMalformed},
		{"text after value", `{"a":1} x`, nil, ErrMalformed},
		{"extra close", `{"a":1}}`, nil, ErrMalformed},
		{"mismatched close", `[1}`, nil, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Fed whole and byte by byte: the result must not depend on
			// how the text was split.
			for _, step := range []int{len(tt.in) + 1, 1} {
				p := New()
				for i := 0; i < len(tt.in); i += step {
					p.WriteString(tt.in[i:min(i+step, len(tt.in))])
				}
				got, err := p.Value()
				if tt.err != nil {
					if !errors.Is(err, tt.err) {
						t.Fatalf("step %d: Value(%q) = %#v, %v; want error %v", step, tt.in, got, err, tt.err)
					}
				} else if err != nil || !equal(got, tt.want) {
					t.Fatalf("step %d: Value(%q) = %#v, %v; want %#v", step, tt.in, got, err, tt.want)
				}
			}
			// The oracle agrees.
			got, _, err := refParse(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("refParse(%q) = %#v, %v; want error %v", tt.in, got, err, tt.err)
				}
			} else if err != nil || !equal(got, tt.want) {
				t.Fatalf("refParse(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestErrorIsStickyAndPositioned(t *testing.T) {
	p := New()
	if _, err := p.WriteString(`{"path":"a",`); err != nil {
		t.Fatal(err)
	}
	n, err := p.WriteString(` x`)
	if !errors.Is(err, ErrMalformed) || n != 1 {
		t.Fatalf("Write = %d, %v; want 1, ErrMalformed", n, err)
	}
	if want := `unexpected 'x' looking for a key at byte 13`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if _, err := p.WriteString(`"b":1}`); !errors.Is(err, ErrMalformed) {
		t.Errorf("Write after error = %v; want the error again", err)
	}
	if _, err := p.Value(); !errors.Is(err, ErrMalformed) {
		t.Errorf("Value after error = %v", err)
	}
	// The preview keeps what it had.
	if s, ok := p.String("path"); s != "a" || !ok {
		t.Errorf("String after error = %q, %v", s, ok)
	}
}

func TestAccessors(t *testing.T) {
	p := New()
	p.WriteString(`{"path":"a.go","line":12,"content":"pack`)
	if got, want := p.Keys(), []string{"path", "line", "content"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %q; want %q", got, want)
	}
	if s, ok := p.String("content"); s != "pack" || !ok {
		t.Errorf(`String("content") = %q, %v`, s, ok)
	}
	if _, ok := p.String("line"); ok {
		t.Error(`String("line") ok for a number`)
	}
	if _, ok := p.String("nope"); ok {
		t.Error(`String("nope") ok`)
	}
	if v, ok := p.Lookup("line"); v != 12.0 || !ok {
		t.Errorf(`Lookup("line") = %v, %v`, v, ok)
	}
	// A string handed out earlier is not changed by later writes.
	before, _ := p.String("content")
	p.WriteString(`age main\n`)
	after, _ := p.String("content")
	if before != "pack" || after != "package main\n" {
		t.Errorf("before %q, after %q", before, after)
	}

	q := New()
	q.WriteString(`[1`)
	if q.Keys() != nil || q.Changed() != nil {
		t.Error("Keys/Changed of an array are not nil")
	}
}

// TestChanged follows a write_file call as the model streams it.
func TestChanged(t *testing.T) {
	steps := []struct {
		delta string
		want  []string
	}{
		{`{"pa`, nil},
		{`th":`, nil},
		{` "src/`, []string{"path"}},
		{`a.go", `, []string{"path"}},
		{`"content": `, nil},
		{`"pack`, []string{"content"}},
		{`age\`, []string{"content"}},
		{`n`, []string{"content"}}, // the escape completes
		{`\uD83D`, nil},            // half a surrogate pair shows nothing
		{`\uDE00", "mode": 4`, []string{"content", "mode"}},
		{`.`, []string{"mode"}}, // 4. is not a number yet: mode disappears
		{`5e`, []string{"mode"}},
		{`+`, nil},
		{`2, "path": "b`, []string{"path", "mode"}},
		{`.go", "opts": {"x": [`, []string{"path", "opts"}},
		{`"y", {"k`, []string{"opts"}},
		{`": tr`, []string{"opts"}},
		{`ue}]}}`, nil},
	}
	p := New()
	for _, s := range steps {
		if _, err := p.WriteString(s.delta); err != nil {
			t.Fatal(err)
		}
		if got := p.Changed(); !slices.Equal(got, s.want) {
			t.Errorf("after %q: Changed = %q; want %q", s.delta, got, s.want)
		}
	}
	want := obj("path", "b.go", "content", "package\n😀", "mode", 450.0,
		"opts", obj("x", arr("y", obj("k", true))))
	if v, err := p.Value(); err != nil || !equal(v, want) {
		t.Errorf("Value = %#v, %v", v, err)
	}
	if got := p.Keys(); !slices.Equal(got, []string{"path", "content", "mode", "opts"}) {
		t.Errorf("Keys = %q", got)
	}
}

// TestChangedExact checks, byte by byte on documents with no numbers or
// repeated keys, that Changed names exactly the fields whose value changed.
func TestChangedExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		doc := genDoc(rng, genOpts{numbers: false, dupKeys: false})
		p := New()
		prev := map[string]any{}
		for i := range len(doc) {
			p.Write([]byte{doc[i]})
			v, err := p.Value()
			cur, _ := v.(map[string]any)
			if err != nil || cur == nil {
				break
			}
			if got, want := p.Changed(), diffKeys(prev, cur, p.Keys()); !slices.Equal(got, want) {
				t.Fatalf("%q after byte %d: Changed = %q; want %q", doc, i, got, want)
			}
			prev = cur
		}
	}
}

// diffKeys lists the keys whose value differs between two top-level objects,
// in the order of keys (then any that vanished).
func diffKeys(prev, cur map[string]any, keys []string) []string {
	var out []string
	for _, k := range keys {
		if pv, ok := prev[k]; !ok || !equal(pv, cur[k]) {
			out = append(out, k)
		}
	}
	for k := range prev {
		if _, ok := cur[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// TestRandomDocuments runs the fuzz property over generated documents, which
// reach deeper, more varied JSON than mutation does.
func TestRandomDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 400
	if testing.Short() {
		n = 50
	}
	for range n {
		doc := genDoc(rng, genOpts{numbers: true, dupKeys: true})
		checkIncremental(t, []byte(doc), rng.Uint64())
	}
}

func FuzzIncremental(f *testing.F) {
	for _, s := range seedDocs {
		f.Add([]byte(s), uint64(len(s)))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add([]byte(genDoc(rng, genOpts{numbers: true, dupKeys: true})), rng.Uint64())
	}
	f.Fuzz(func(t *testing.T, doc []byte, seed uint64) {
		if len(doc) > 4096 {
			return
		}
		checkIncremental(t, doc, seed)
	})
}

var seedDocs = []string{
	`{"path":"a/b.go","content":"package main\n\nfunc main() {\n\tprintln(\"hi \\\\ there\")\n}\n"}`,
	`{"command":"ls -la","timeout":30,"cwd":null,"background":false}`,
	`{"old_str":"caf\u00e9","new_str":"café 😀 \uD83D\uDE00 中文","replace_all":true}`,
	`{"tasks":[{"content":"Write tests","status":"in_progress","activeForm":"Writing tests"},{"content":"Ship","status":"pending"}]}`,
	`[1, -0, 0.5, -12.25e+10, 3E-2, 1e400, 6.02e23, [], {}, [[]], [{"a":[{"b":null}]}]]`,
	` { "a" : [ 1 , 2 ] , "b" : { "c" : "d" } , "e" : [ ] } `,
	`{"a":1,"a":2,"b":{"x":"1","x":"2"}}`,
	`"top-level string with \" quote and \\ backslash and \/ slash and \b\f\n\r\t"`,
	`-1.5e-7`,
	`true`,
	`{"lone":"\uD800 \uDC00 \uD83D\u0041 \uDBFF\uDFFF"}`,
	"{\"bytes\":\"\xff\xfe \xc3 \xe2\x82 ok\"}",
	`{"x":NaN,"y":-Infinity,"z":[Infinity]}`,
	`{"bad":tru}`,
	`[1,]`,
}

// checkIncremental is the fuzz property: the incremental Value equals the
// oracle's re-parse of the same prefix — for every prefix of a short
// document, at every delta boundary when doc is fed in random deltas; fed in
// deltas, Changed never misses a change and String agrees with Value; a
// complete valid document decodes as encoding/json decodes it.
func checkIncremental(t *testing.T, doc []byte, seed uint64) {
	t.Helper()
	if len(doc) <= everyPrefixMax {
		p := New()
		for i := 0; i <= len(doc); i++ {
			if i > 0 {
				p.Write(doc[i-1 : i])
			}
			compareRef(t, p, doc[:i])
		}
	}

	rng := rand.New(rand.NewPCG(seed, seed>>32))
	p := New()
	prev := map[string]any{}
	var final any
	var finalErr error
	for i := 0; i < len(doc); {
		n := 1 + rng.IntN(24)
		if rng.IntN(8) == 0 {
			n = 1 + rng.IntN(len(doc))
		}
		n = min(n, len(doc)-i)
		p.Write(doc[i : i+n])
		i += n
		changed := p.Changed()
		compareRef(t, p, doc[:i])
		final, finalErr = p.Value()
		cur, _ := final.(map[string]any)
		if finalErr != nil || cur == nil {
			continue
		}
		for _, k := range diffKeys(prev, cur, p.Keys()) {
			if !slices.Contains(changed, k) {
				t.Fatalf("%q up to %d: Changed = %q misses %q (%#v → %#v)", doc, i, changed, k, prev[k], cur[k])
			}
		}
		if !slices.IsSortedFunc(changed, orderIn(p.Keys())) || len(slices.Compact(slices.Clone(changed))) != len(changed) {
			t.Fatalf("%q up to %d: Changed = %q not in document order %q", doc, i, changed, p.Keys())
		}
		for k, v := range cur {
			s, ok := p.String(k)
			if vs, isStr := v.(string); ok != isStr || s != vs {
				t.Fatalf("%q up to %d: String(%q) = %q, %v; Value has %#v", doc, i, k, s, ok, v)
			}
		}
		prev = cur
	}

	var std any
	if len(doc) > 0 && json.Unmarshal(doc, &std) == nil {
		if finalErr != nil || !equal(final, std) {
			t.Fatalf("%q: final Value = %#v, %v; encoding/json = %#v", doc, final, finalErr, std)
		}
	}
}

// everyPrefixMax bounds the documents checked at every prefix: that costs
// O(n²), and the fuzzer minimises each new input by re-running it many times.
const everyPrefixMax = 300

// compareRef checks p, fed prefix, against the oracle.
func compareRef(t *testing.T, p *Parser, prefix []byte) {
	t.Helper()
	got, err := p.Value()
	want, wantKeys, wantErr := refParse(string(prefix))
	if !sameErr(err, wantErr) || err == nil && !equal(got, want) {
		t.Fatalf("prefix %q:\n got %#v, %v\nwant %#v, %v", prefix, got, err, want, wantErr)
	}
	if err == nil && !slices.Equal(p.Keys(), wantKeys) {
		t.Fatalf("prefix %q: Keys = %q; want %q", prefix, p.Keys(), wantKeys)
	}
}

// orderIn compares keys by their position in keys; keys not there (fields
// that vanished) sort last.
func orderIn(keys []string) func(a, b string) int {
	pos := func(k string) int {
		if i := slices.Index(keys, k); i >= 0 {
			return i
		}
		return len(keys)
	}
	return func(a, b string) int { return pos(a) - pos(b) }
}

func sameErr(a, b error) bool {
	for _, e := range []error{ErrIncomplete, ErrMalformed} {
		if errors.Is(a, e) != errors.Is(b, e) {
			return false
		}
	}
	return (a == nil) == (b == nil)
}

// equal is reflect.DeepEqual for decoded JSON, with NaN equal to itself and
// nil and empty slices alike.
func equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || math.IsNaN(a) && math.IsNaN(b))
	default:
		return a == b
	}
}

type genOpts struct{ numbers, dupKeys bool }

// genDoc writes a random valid JSON document, top-level object most of the
// time, with random whitespace, escapes of every kind and multi-byte text.
func genDoc(rng *rand.Rand, o genOpts) string {
	var b strings.Builder
	g := &gen{rng: rng, b: &b, o: o}
	if rng.IntN(6) == 0 {
		g.value(0)
	} else {
		g.object(0)
	}
	return b.String()
}

type gen struct {
	rng *rand.Rand
	b   *strings.Builder
	o   genOpts
}

func (g *gen) ws() {
	if g.rng.IntN(4) == 0 {
		g.b.WriteString([]string{" ", "\n", "\t", "\r\n  ", "  "}[g.rng.IntN(5)])
	}
}

func (g *gen) value(depth int) {
	g.ws()
	n := 7
	if depth > 3 {
		n = 4 // scalars only
	}
	switch k := g.rng.IntN(n); {
	case k == 0 && g.o.numbers:
		g.b.WriteString([]string{"0", "-0", "7", "-12", "3.25", "-0.5", "1e9", "2E+3", "6.02e-23", "-1.5E-2", "12345678901234567890", "0.000001"}[g.rng.IntN(12)])
	case k <= 1:
		g.b.WriteString([]string{"true", "false", "null"}[g.rng.IntN(3)])
	case k <= 3:
		g.str()
	case k <= 5:
		g.object(depth + 1)
	default:
		g.b.WriteByte('[')
		for i := range g.rng.IntN(4) {
			if i > 0 {
				g.b.WriteByte(',')
			}
			g.value(depth + 1)
		}
		g.ws()
		g.b.WriteByte(']')
	}
	g.ws()
}

func (g *gen) object(depth int) {
	g.ws()
	g.b.WriteByte('{')
	var keys []string
	for i := range g.rng.IntN(5) {
		if i > 0 {
			g.b.WriteByte(',')
		}
		g.ws()
		key := fmt.Sprintf("k%d", i)
		if g.o.dupKeys && len(keys) > 0 && g.rng.IntN(5) == 0 {
			key = keys[g.rng.IntN(len(keys))]
		}
		if g.rng.IntN(4) == 0 {
			key += "é\"\\"
		}
		keys = append(keys, key)
		k, _ := json.Marshal(key)
		g.b.Write(k)
		g.ws()
		g.b.WriteByte(':')
		g.value(depth)
	}
	g.ws()
	g.b.WriteByte('}')
	g.ws()
}

// str writes a string mixing raw text with every escape form.
func (g *gen) str() {
	g.b.WriteByte('"')
	for range g.rng.IntN(12) {
		switch g.rng.IntN(12) {
		case 0:
			g.b.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[g.rng.IntN(8)])
		case 1:
			fmt.Fprintf(g.b, `\u%04x`, g.rng.IntN(0xD800))
		case 2:
			g.b.WriteString([]string{`\uD83D\uDE00`, `\ud83d\ude80`, `\uDBFF\uDFFF`, `\uD800`, `\uDC00`, `\uD83D\u0041`}[g.rng.IntN(6)])
		case 3:
			g.b.WriteString([]string{"é", "中文", "😀", "\u2028", "ß"}[g.rng.IntN(5)])
		case 4:
			// Invalid UTF-8 is valid JSON to encoding/json, which decodes
			// each bad byte as U+FFFD.
			g.b.WriteString([]string{"\xff", "\xc3(", "\xe2\x82", "\xed\xa0\x80"}[g.rng.IntN(4)])
		default:
			g.b.WriteString([]string{"a", "path/to/file.go", " ", "func main() {", "x := 1", "'", "<|x|>"}[g.rng.IntN(7)])
		}
	}
	g.b.WriteByte('"')
}
