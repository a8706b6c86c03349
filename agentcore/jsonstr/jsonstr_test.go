package jsonstr

import (
	"encoding/json"
	"testing"
)

// Unquote decodes a string as encoding/json does, refusing what it
// refuses, whatever the bytes: broken escapes, lone surrogates, invalid
// UTF-8 and control characters included.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"\u00e9\n\t\"\\\/"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
		`"\u12"`, `"\x"`, "\"a\x01\"", "\"\xff\xfe\"", `"a\"`, `a`, `"`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		got, ok := Unquote(q)
		var want string
		err := json.Unmarshal(q, &want)
		if q := string(q); len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			if ok {
				t.Fatalf("Unquote(%q) = %q, want a refusal: not a string", q, got)
			}
			return
		}
		if ok != (err == nil) || ok && got != want {
			t.Fatalf("Unquote(%q) = %q, %v; encoding/json: %q, %v", q, got, ok, want, err)
		}
	})
}

// BigStrings finds exactly the strings of at least the size asked for,
// quotes included, escaped quotes and backslashes inside them too.
func TestBigStrings(t *testing.T) {
	doc := []byte(`{"k":"short","long":"` + `abcd\"c\\` + `","x":["0123456789"]}`)
	var got []string
	for _, s := range BigStrings(doc, 10) {
		got = append(got, string(doc[s[0]:s[1]]))
	}
	want := []string{`"abcd\"c\\"`, `"0123456789"`}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("BigStrings = %q, want %q", got, want)
	}
	if s := BigStrings([]byte(`{"a":"unterminated`), 1); len(s) != 1 {
		t.Fatalf("an unterminated string: %v, want only the key", s)
	}
}
