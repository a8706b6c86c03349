package llm

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/fantasy"
	"github.com/tidwall/gjson"
)

// Nearly every chunk of a long Chat Completions stream is one of two
// shapes: a piece of text, or the next piece of a call's arguments. Decoding
// each into openai-go's ChatCompletionChunk costs about 20 µs (its decoder
// walks the whole type by reflection and keeps every field's metadata):
// half the server's CPU for a reply in 16-byte deltas. readPlain reads
// those two shapes with gjson, the parser openai-go's decoder itself runs
// on, by the same rules (exact member names; a chunk naming a member it
// reads twice goes to the SDK); any other chunk, and any chunk it is unsure of, goes to the SDK's
// type whole, so what is yielded is the same either way
// (TestPlainChunksReadAsTheSDKReadsThem).

// plainPiece is a plain chunk's content: text, or with call ≥ 0 the next
// piece of the arguments of the call at that index.
type plainPiece struct {
	text string
	call int64
}

// readPlain reads data as a plain chunk of a kind's stream: one choice,
// index 0, no finish reason, no usage, and a delta holding either a
// non-empty text or one call piece, and no member the kind's hooks would
// act on. ok is false for anything else.
func readPlain(data []byte, kind sdkStream) (p plainPiece, ok bool) {
	if !gjson.ValidBytes(data) {
		return p, false
	}
	top, ok := members(gjson.ParseBytes(data), nil, "choices", "usage")
	if !ok {
		return p, false
	}
	choices, usage := top[0], top[1]
	if usage.Exists() && usage.Type != gjson.Null || !choices.IsArray() {
		return p, false
	}
	list := choices.Array()
	if len(list) != 1 {
		return p, false
	}
	choice, ok := members(list[0], nil, "index", "finish_reason", "delta")
	if !ok {
		return p, false
	}
	index, finish := choice[0], choice[1]
	if index.Exists() && !isInt(index, 0) || finish.Exists() && finish.Type != gjson.Null {
		return p, false
	}
	// Of the delta, what the kind's hooks read must not be there.
	delta, ok := members(choice[2], func(name string, v gjson.Result) bool { return otherMemberIsInert(kind, name, v) }, "content", "tool_calls")
	if !ok {
		return p, false
	}
	content, calls := delta[0], delta[1]
	hasText := content.Exists() && content.Type != gjson.Null
	hasCalls := calls.Exists() && calls.Type != gjson.Null
	switch {
	case hasText && !hasCalls:
		if content.Type != gjson.String || content.Str == "" {
			return p, false
		}
		return plainPiece{text: content.Str, call: -1}, true
	case hasCalls && !hasText:
		return readCallPiece(calls)
	}
	return p, false
}

// readCallPiece reads a delta's tool_calls holding the next piece of one
// call's arguments; the call's id, type and name, which the stream reads
// only from a call's first piece, may be there too.
func readCallPiece(calls gjson.Result) (p plainPiece, ok bool) {
	if !calls.IsArray() {
		return p, false
	}
	list := calls.Array()
	if len(list) != 1 {
		return p, false
	}
	call, ok := members(list[0], nil, "index", "function")
	if !ok {
		return p, false
	}
	function, ok := members(call[1], nil, "arguments")
	if !ok || function[0].Type != gjson.String {
		return p, false
	}
	at := int64(0) // an absent index is 0, as the SDK reads it
	if index := call[0]; index.Exists() {
		n, err := strconv.ParseInt(index.Raw, 10, 64)
		if err != nil || n < 0 {
			return p, false
		}
		at = n
	}
	return plainPiece{text: function[0].Str, call: at}, true
}

// members reads the members of obj named names, in that order (a missing
// one does not Exist). ok is false when obj is not an object, names one of
// them twice (the SDK's decoder and a hook could then read different
// ones), or has another member other refuses (nil: any other is fine).
func members(obj gjson.Result, other func(name string, v gjson.Result) bool, names ...string) (vals []gjson.Result, ok bool) {
	if !obj.IsObject() {
		return nil, false
	}
	vals, ok = make([]gjson.Result, len(names)), true
	obj.ForEach(func(k, v gjson.Result) bool {
		i := slices.Index(names, k.Str)
		switch {
		case i >= 0 && vals[i].Exists():
			ok = false
		case i >= 0:
			vals[i] = v
		case other != nil:
			ok = other(k.Str, v)
		}
		return ok
	})
	return vals, ok
}

// otherMemberIsInert says a delta member other than content and
// tool_calls changes nothing the stream yields: annotations are sources;
// the openai-compatible hook reads reasoning_content and reasoning (with
// encoding/json, whose member names match in any case); OpenRouter's reads
// a non-empty reasoning_details.
func otherMemberIsInert(kind sdkStream, name string, v gjson.Result) bool {
	if strings.EqualFold(name, "annotations") {
		return false
	}
	switch kind {
	case sdkCompat:
		return !strings.EqualFold(name, "reasoning_content") && !strings.EqualFold(name, "reasoning")
	case sdkOpenRouter:
		if strings.EqualFold(name, "reasoning_details") {
			// Only the exact name, empty: "nothing this time".
			return name == "reasoning_details" && (v.Type == gjson.Null || v.IsArray() && len(v.Array()) == 0)
		}
	}
	return true
}

// isInt says v is the integer literal n.
func isInt(v gjson.Result, n int64) bool {
	got, err := strconv.ParseInt(v.Raw, 10, 64)
	return v.Type == gjson.Number && err == nil && got == n
}

// watchReasoning wraps yield to keep *open true between a reasoning part
// and the end of the reasoning.
func watchReasoning(yield func(fantasy.StreamPart) bool, open *bool) func(fantasy.StreamPart) bool {
	return func(p fantasy.StreamPart) bool {
		switch p.Type {
		case fantasy.StreamPartTypeReasoningStart, fantasy.StreamPartTypeReasoningDelta:
			*open = true
		case fantasy.StreamPartTypeReasoningEnd:
			*open = false
		}
		return yield(p)
	}
}

// plainChunks turns readPlain on; tests turn it off to compare.
var plainChunks = true
