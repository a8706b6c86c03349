package agentcore

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSignalDefaultsAndLegacyTypes(t *testing.T) {
	cases := []struct {
		in       Signal
		typ, tag string
	}{
		{Signal{Type: SignalUser}, "user", "user"},
		{Signal{Type: SignalState}, "state", "state"},
		{Signal{Type: SignalNotification}, "notification", "notification"},
		{Signal{Type: SignalReactive}, "reactive", "system-reminder"},
		{Signal{Type: "user-message"}, "user", "user"},
		{Signal{Type: "system-reminder"}, "reactive", "system-reminder"},
		{Signal{Type: SignalReactive, TagName: "ci_status"}, "reactive", "ci_status"},
	}
	for _, c := range cases {
		s, err := NewSignal(c.in)
		if err != nil {
			t.Fatalf("%+v: %v", c.in, err)
		}
		if string(s.Type) != c.typ || s.TagName != c.tag || s.ID == "" || s.CreatedAt.IsZero() {
			t.Errorf("%+v → %+v", c.in, s)
		}
	}
}

func TestSignalErrors(t *testing.T) {
	cases := []struct {
		in   Signal
		want string
	}{
		{Signal{Type: "shout"}, "Invalid signal type: shout. Use a supported signal type and set tagName for custom XML tags."},
		{Signal{Type: SignalUser, TagName: "1abc"}, "Invalid signal XML tag name: 1abc"},
		{Signal{Type: SignalUser, TagName: "a b"}, "Invalid signal XML tag name: a b"},
		{Signal{Type: SignalUser, Attributes: Attrs{{"ok", 1.0}, {"bad name", "x"}}}, "Invalid signal XML attribute name: bad name"},
		{Signal{Type: SignalUser, Attributes: Attrs{{"x<y", "x"}}}, "Invalid signal XML attribute name: x<y"},
		{Signal{Type: SignalState, Transient: true}, "state signals cannot be transient"},
	}
	for _, c := range cases {
		_, err := NewSignal(c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: err %v, want %q", c.in, err, c.want)
		}
	}
	// The name rule allows what the spec allows.
	for _, name := range []string{"a", "_x", "A.b-c_9", "ci-status"} {
		if _, err := NewSignal(Signal{Type: SignalUser, TagName: name, Attributes: Attrs{{name, "v"}}}); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
}

func TestSignalXML(t *testing.T) {
	s := Signal{TagName: "notification", Contents: `a < b & "c" > d`, Attributes: Attrs{
		{"id", "n1"}, {"skip", nil}, {"priority", "high"}, {"count", 3.0}, {"ok", true}, {"q", `say "hi" & <bye>`},
	}}
	want := `<notification id="n1" priority="high" count="3" ok="true" q="say &quot;hi&quot; &amp; &lt;bye&gt;">a &lt; b &amp; "c" &gt; d</notification>`
	if got := s.XML(); got != want {
		t.Fatalf("XML\n got %s\nwant %s", got, want)
	}
	empty := Signal{TagName: "state", Attributes: Attrs{{"a", 1.5}}}
	if got := empty.XML(); got != `<state a="1.5" />` {
		t.Fatalf("self-closing: %s", got)
	}
	// A user signal without attributes is the plain text; with, its XML.
	u := Signal{Type: SignalUser, TagName: "user", Contents: "hi <there>"}
	if u.ModelText() != "hi <there>" {
		t.Fatalf("plain user text: %s", u.ModelText())
	}
	u.Attributes = Attrs{{"from", nil}}
	if u.ModelText() != "hi <there>" {
		t.Fatalf("nil attributes are not meaningful: %s", u.ModelText())
	}
	u.Attributes = Attrs{{"from", "phone"}}
	if u.ModelText() != `<user from="phone">hi &lt;there&gt;</user>` {
		t.Fatalf("user with attributes: %s", u.ModelText())
	}
}

func TestAttrsKeepOrderAndMerge(t *testing.T) {
	var a Attrs
	if err := json.Unmarshal([]byte(`{"z":"1","a":2,"m":true,"n":null}`), &a); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(a)
	if string(out) != `{"z":"1","a":2,"m":true,"n":null}` {
		t.Fatalf("round trip %s", out)
	}
	merged := a.Merge(Attrs{{"a", "two"}, {"new", "x"}})
	out, _ = json.Marshal(merged)
	if string(out) != `{"z":"1","a":"two","m":true,"n":null,"new":"x"}` {
		t.Fatalf("merge %s", out)
	}
	if err := json.Unmarshal([]byte(`{"x":{"nested":1}}`), &a); err == nil || !strings.Contains(err.Error(), "attribute x") {
		t.Fatalf("nested value: %v", err)
	}
	if err := json.Unmarshal([]byte(`["x"]`), &a); err == nil {
		t.Fatal("an array was taken for attributes")
	}
}

func TestSignalMessageProjection(t *testing.T) {
	s, err := NewSignal(Signal{Type: SignalNotification, Contents: "", Attributes: Attrs{{"source", "ci"}}, Metadata: map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Message("t1", "r1")
	if m.Role != RoleSignal || m.Type != "notification" || m.ID != s.ID || len(m.Content.Parts) != 1 || m.Content.Parts[0].Type != "text" {
		t.Fatalf("message %+v", m)
	}
	back, ok := SignalOf(m)
	if !ok || back.ID != s.ID || back.TagName != "notification" || back.Type != SignalNotification {
		t.Fatalf("read back %+v", back)
	}
	if v, _ := back.Attributes.Get("source"); v != "ci" {
		t.Fatalf("attributes %+v", back.Attributes)
	}
}

// A stored signal reads back with its attributes in their order, after a
// trip through JSON (the store's map loses it).
func TestStoredSignalKeepsAttributeOrder(t *testing.T) {
	s, _ := NewSignal(Signal{Type: SignalNotification, Contents: "x", Attributes: Attrs{{"z", "1"}, {"b", "2"}, {"m", "3"}}})
	m := s.Message("t", "r")
	raw, _ := json.Marshal(m)
	var back Message
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, ok := SignalOf(back)
	if !ok || got.XML() != `<notification z="1" b="2" m="3">x</notification>` {
		t.Fatalf("read back %s", got.XML())
	}
}

// Whatever a caller sends, a signal either is refused or renders as XML
// that an XML reader reads back as the same tag, attributes and contents:
// nothing in a signal can break out of its element.
func FuzzSignalXML(f *testing.F) {
	f.Add("notification", "source", "ci & <b>", "build \"7\" failed <script>")
	f.Add("user", "from", "", "")
	f.Add("x", "a.b-c", `"'<>&`, "]]>")
	f.Fuzz(func(t *testing.T, tag, attr, value, contents string) {
		s, err := NewSignal(Signal{Type: SignalReactive, TagName: tag, Contents: contents, Attributes: Attrs{{attr, value}}})
		if err != nil {
			return
		}
		if !utf8.ValidString(value) || !utf8.ValidString(contents) || strings.ContainsAny(value+contents, "\x00\r") || hasXMLInvalid(value+contents) {
			return // XML cannot carry these at all; the model reads bytes, the check below reads XML
		}
		dec := xml.NewDecoder(strings.NewReader(s.XML()))
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", s.XML(), err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok || start.Name.Local != s.TagName || len(start.Attr) != 1 || start.Attr[0].Name.Local != attr || start.Attr[0].Value != value {
			t.Fatalf("%s read back as %#v", s.XML(), tok)
		}
		var text strings.Builder
		for {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%s: %v", s.XML(), err)
			}
			if cd, ok := tok.(xml.CharData); ok {
				text.Write(cd)
				continue
			}
			if end, ok := tok.(xml.EndElement); !ok || end.Name.Local != s.TagName {
				t.Fatalf("%s: unexpected %#v inside the element", s.XML(), tok)
			}
			break
		}
		if text.String() != contents {
			t.Fatalf("contents read back as %q, sent %q", text.String(), contents)
		}
	})
}

// hasXMLInvalid reports characters XML 1.0 cannot hold.
func hasXMLInvalid(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return true
		}
	}
	return false
}

// Attributes read from any JSON either fail with an error or survive a
// round trip, order and all.
func FuzzAttrsJSON(f *testing.F) {
	f.Add([]byte(`{"z":"1","a":2,"m":true,"n":null}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Attrs
		if err := json.Unmarshal(data, &a); err != nil {
			return
		}
		out, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("marshal %v: %v", a, err)
		}
		var b Attrs
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("read back %s: %v", out, err)
		}
		again, _ := json.Marshal(b)
		if string(again) != string(out) {
			t.Fatalf("round trip changed %s into %s", out, again)
		}
	})
}
