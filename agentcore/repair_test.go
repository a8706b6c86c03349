package agentcore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRepairToolInput(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"valid unchanged", `{"a":1}`, `{"a":1}`},
		{"valid keeps its spacing", " {\"a\" : [1, 2]}\n", " {\"a\" : [1, 2]}\n"},
		{"valid with a token inside a string", `{"s":"<|call|>"}`, `{"s":"<|call|>"}`},
		{"valid non-object", `[1]`, `[1]`},
		{"empty", ``, `{}`},
		{"whitespace", " \n\t", `{}`},

		{"trailing special token", `{"a":1}<|call|>`, `{"a":1}`},
		{"special token after space", "{\"a\":1} <|end|>\n", `{"a":1}`},
		{"leading special token", `<|tool_call|>{"a":1}`, `{"a":1}`},
		{"token inside a string kept", `{"s":"<|x|>",}<|call|>`, `{"s":"<|x|>"}`},

		{"key missing its opening quote", `{"a":"b",c":"d"}`, `{"a":"b","c":"d"}`},
		{"first key missing its opening quote", `{path":"x"}`, `{"path":"x"}`},

		{"unquoted key", `{command:"ls"}`, `{"command":"ls"}`},
		{"unquoted keys with spaces", `{ command : "ls", timeout: 5 }`, `{ "command" : "ls", "timeout": 5 }`},
		{"nested unquoted keys", `{a:{b:[1,{c:true}]}}`, `{"a":{"b":[1,{"c":true}]}}`},
		{"out-of-range number is still JSON", `{a:1e400}`, `{"a":1e400}`},
		{"literals in values untouched", `{a:true,b:null,c:false}`, `{"a":true,"b":null,"c":false}`},

		{"single quotes", `{'key':'val'}`, `{"key":"val"}`},
		{"double quote inside single quotes", `{'msg':'say "hi"'}`, `{"msg":"say \"hi\""}`},
		{"escaped apostrophe", `{'msg':'it\'s'}`, `{"msg":"it's"}`},
		{"other escapes kept", `{'msg':'a\nb\\'}`, `{"msg":"a\nb\\"}`},
		{"apostrophe inside double quotes", `{msg:"it's fine"}`, `{"msg":"it's fine"}`},
		{"apostrophes in a double-quoted value beside a single-quoted one", `{'a':"don't",'b':'x'}`, `{"a":"don't","b":"x"}`},

		{"trailing comma in object", `{"a":1,}`, `{"a":1}`},
		{"trailing comma in array", `[1,2,]`, `[1,2]`},
		{"trailing commas nested", `{"a":[1,],}`, `{"a":[1]}`},
		{"trailing comma before newline", "{\"a\":1 ,\n}", "{\"a\":1 \n}"},
		{"comma inside a string kept", `{"a":"x,}",}`, `{"a":"x,}"}`},

		{"all at once", `{command:'ls -la', "cwd":"~/it's",}<|call|>`, `{"command":"ls -la", "cwd":"~/it's"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RepairToolInput(tt.raw)
			if err != nil || got != tt.want {
				t.Fatalf("RepairToolInput(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
		})
	}
}

// The error is what the model reads to correct its call: it names the
// problem and quotes the model's own text up to it.
func TestRepairToolInputError(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"a":`, `invalid JSON in tool arguments: unexpected end of JSON input (at byte 5, near "{\"a\":")`},
		{`{"a" 1}`, `invalid JSON in tool arguments: invalid character '1' after object key (at byte 5, near "{\"a\" 1")`},
		{`{"a":[1 2]}`, `invalid JSON in tool arguments: invalid character '2' after array element (at byte 8, near "{\"a\":[1 2")`},
		// Reported past the repaired unquoted key, at the model's byte.
		{`{command: ls}`, `invalid JSON in tool arguments: invalid character 'l' looking for beginning of value (at byte 10, near "{command: l")`},
		{`{"a":"x"} {"b":1}`, `invalid JSON in tool arguments: invalid character '{' after top-level value (at byte 10, near "{\"a\":\"x\"} {")`},
		{"{\"content\":\"line one\nline two\"}", `invalid JSON in tool arguments: invalid character '\n' in string literal (at byte 20, near "{\"content\":\"line one\n")`},
		{`{"long":"` + strings.Repeat("é", 30) + `"`, `invalid JSON in tool arguments: unexpected end of JSON input (at byte 70, near "` + strings.Repeat("é", 11) + `\"")`},
		{`'unterminated`, `invalid JSON in tool arguments: unexpected end of JSON input (at byte 13, near "'unterminated")`},
	}
	for _, tt := range tests {
		got, err := RepairToolInput(tt.raw)
		if !errors.Is(err, ErrInvalidToolInput) || err.Error() != tt.want {
			t.Errorf("RepairToolInput(%q) = %q, %v\nwant error %s", tt.raw, got, err, tt.want)
		}
	}
}

func FuzzRepairToolInput(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `{"a":1}<|call|>`, `{"a":"b",c":"d"}`, `{command:"ls"}`, `{'key':'it\'s'}`,
		`{"a":[1,],}`, `{msg:"it's"}`, `<|x|>`, `{a:'"',}`, `'\`, `{"a":`, "{\"\xff\":1,}", `[1 2]`,
		"0" + strings.Repeat("\xb3", 24), // an error among continuation bytes: near must stay in range
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := RepairToolInput(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidToolInput) || !strings.Contains(err.Error(), "(at byte ") {
				t.Fatalf("RepairToolInput(%q) error %q", raw, err)
			}
			return
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("RepairToolInput(%q) = %q, not valid JSON", raw, got)
		}
		if json.Valid([]byte(raw)) && got != raw {
			t.Fatalf("RepairToolInput(%q) = %q; valid input must come back unchanged", raw, got)
		}
	})
}
