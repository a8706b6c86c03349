package agentcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// decodeInput gives what a Decoder with UseNumber gives, value and error,
// whichever way it decodes.
func TestDecodeInputAsDecoder(t *testing.T) {
	for _, doc := range []string{
		`{"a":"x"}`, `{"a":1}`, `{"a":"\"1","b":[true,null,-2.50]}`, `["\\", "-"]`, `{"k\"-":"v"}`,
		`{} x`, `{"a":1} x`, ``, ` `, `{"a":`, `"é-9"`, "\"\xff\"", `[1e400]`, `{"a":"b"}}`, `nul`,
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.UseNumber()
		var want any
		werr := dec.Decode(&want)
		got, err := decodeInput(json.RawMessage(doc))
		if fmt.Sprint(err) != fmt.Sprint(werr) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%q: got %#v, %v; want %#v, %v", doc, got, err, want, werr)
		}
	}
}
