package agentcore

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"
)

// bigInputs are inputs with big strings in every place they can be, and
// the unusual ones that must be decoded the ordinary way.
func bigInputs() []string {
	big := strings.Repeat("line \"quoted\" \\ é \u2028 \t\n", 4<<10) // ~100 KiB
	q, _ := json.Marshal(big)
	s := string(q)
	return []string{
		`{"path":"a.go","content":` + s + `}`,
		`{"content":` + s + `,"n":12,"f":1.5e3,"list":[` + s + `,"x",` + s + `],"m":{"k":` + s + `}}`,
		`{` + s + `:"a key as big as the value", "v":` + s + `}`,
		`[` + s + `, {"deep":[[` + s + `]]}]`,
		`{"own":"\u0000parley-input-0\u0000","content":` + s + `}`,
		`{"own":"\u0000parley-input-7\u0000","content":` + s + `}`,
		`{"content":"` + strings.Repeat("\\ud800 and \\ud83d\\ude00 ", 8<<10) + `"}`,
		`{"content":"` + strings.Repeat("bad\x01", 32<<10) + `"}`,
		`{"content":` + s + `, "broken":`,
		`{"content":"` + strings.Repeat("\xff\xfe", 64<<10) + `"}`,
	}
}

// Taking out the big strings decodes an input exactly as encoding/json
// does, errors included.
func TestDecodeInputSplicedAsPlain(t *testing.T) {
	for i, in := range bigInputs() {
		want, werr := decodePlain(json.RawMessage(in))
		got, gerr := decodeInput(json.RawMessage(in))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("input %d: decodeInput = (%.80v, %v), want (%.80v, %v)", i, got, gerr, want, werr)
		}
	}
}

type typedIn struct {
	Path    string            `json:"path"`
	Content string            `json:"content"`
	Kind    kindOf            `json:"kind,omitempty"`
	List    []string          `json:"list,omitempty"`
	M       map[string]string `json:"m,omitempty"`
	Any     any               `json:"any,omitempty"`
	Ptr     *string           `json:"ptr,omitempty"`
	Inner   []struct {
		Deep string `json:"deep"`
	} `json:"inner,omitempty"`
	Raw json.RawMessage `json:"raw,omitempty"`
	N   int             `json:"n,omitempty"`
}

type kindOf string

// A typed tool's input decodes into its type as encoding/json decodes it,
// strings in fields, slices, maps, interfaces and pointers included, and a
// raw value (which keeps the JSON) the ordinary way.
func TestDecodeTypedAsUnmarshal(t *testing.T) {
	big := strings.Repeat("x\"y\\z\n", 16<<10)
	q, _ := json.Marshal(big)
	s := string(q)
	for i, in := range append(bigInputs(),
		`{"path":"p","content":`+s+`,"kind":`+s+`,"list":[`+s+`],"m":{"a":`+s+`},"any":{"x":[`+s+`]},"ptr":`+s+`,"inner":[{"deep":`+s+`}],"n":3}`,
		`{"content":"short","raw":{"big":`+s+`}}`,
		`{"any":`+s+`}`,
	) {
		var want, got typedIn
		werr := json.Unmarshal([]byte(in), &want)
		spliced := decodeTyped(json.RawMessage(in), &got, nil)
		if spliced && (werr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("input %d: decodeTyped gave %.80v, want %.80v (%v)", i, got, want, werr)
		}
		// The ordinary inputs are spliced; a raw value holding a big
		// string is decoded the ordinary way.
		n := len(bigInputs())
		if wantSpliced := i != n+1; (i == 0 || i >= n) && spliced != wantSpliced {
			t.Errorf("input %d: spliced %v, want %v", i, spliced, wantSpliced)
		}
	}
}

// heapAllocs is the bytes allocated so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A write_file call of N bytes is validated and decoded into its input
// with one string of its content each, not a buffer and a string: each
// decode allocates about N, not 2N.
func TestBigInputDecodedOnce(t *testing.T) {
	const n = 4 << 20
	q, _ := json.Marshal(map[string]string{"path": "big.go", "content": strings.Repeat("\tv := f(x) // \"step\"\n", n/22)})
	for _, c := range []struct {
		name   string
		decode func()
	}{
		{"validation", func() { decodeInput(q) }},
		{"typed", func() {
			var in struct{ Path, Content string }
			decodeTyped(q, &in, nil)
		}},
	} {
		before := heapAllocs()
		c.decode()
		if got := heapAllocs() - before; got > n+n/4 {
			t.Errorf("%s: decoding an input of %d bytes allocated %d", c.name, n, got)
		}
	}
}

// A typed tool takes the big strings its input's validation decoded: a
// write_file call of N bytes is checked and run with one copy of its
// content, N bytes in all. Input its validation changed (an unknown key
// dropped) is decoded again from what the tool runs with.
func TestBigInputDecodedOnceForToolAndValidation(t *testing.T) {
	const n = 4 << 20
	content := strings.Repeat("\tv := f(x) // \"step\"\n", n/22)
	type in struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	var got in
	tool := NewTool("w", "writes", func(_ context.Context, i in, _ *ToolContext) (string, error) {
		got = i
		return "ok", nil
	})
	for _, tc := range []struct {
		name  string
		input map[string]any
		most  uint64
	}{
		{"as sent", map[string]any{"path": "big.go", "content": content}, n + n/4},
		{"a key dropped", map[string]any{"path": "big.go", "content": content, "mode": "0644"}, 0},
	} {
		q, _ := json.Marshal(tc.input)
		got = in{}
		before := heapAllocs()
		decoded := &decodedInput{}
		clean, invalid, err := tool.checkInput("w", q, decoded)
		if err != nil || invalid != nil {
			t.Fatalf("%s: %v %v", tc.name, err, invalid)
		}
		if _, err := tool.Execute(t.Context(), clean, &ToolContext{decoded: decoded}); err != nil {
			t.Fatal(err)
		}
		if allocated := heapAllocs() - before; tc.most > 0 && allocated > tc.most {
			t.Errorf("%s: checking and running an input of %d bytes allocated %d", tc.name, n, allocated)
		}
		if got.Path != "big.go" || got.Content != content {
			t.Errorf("%s: the tool ran with %q and %d bytes of content", tc.name, got.Path, len(got.Content))
		}
	}
}

func FuzzDecodeInputSpliced(f *testing.F) {
	for _, in := range bigInputs() {
		f.Add(in[:min(len(in), 200)], 70<<10)
	}
	f.Add(`{"a":"b\u00e9\"c","d":[1,2]}`, 70<<10)
	f.Fuzz(func(t *testing.T, in string, pad int) {
		// A big string made of in, and in around it.
		pad = min(max(pad, 0), 80<<10)
		q, _ := json.Marshal(strings.Repeat("ab\n", pad/3) + in)
		for _, doc := range []string{in, `{"k":` + string(q) + `,"in":` + in + `}`, `[` + in + `,` + string(q) + `]`} {
			want, werr := decodePlain(json.RawMessage(doc))
			got, gerr := decodeInput(json.RawMessage(doc))
			if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeInput(%.100q) = (%.80v, %v), want (%.80v, %v)", doc, got, gerr, want, werr)
			}
		}
	})
}
