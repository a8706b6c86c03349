package llm

import (
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
	top := gjson.ParseBytes(data)
	if !top.IsObject() {
		return p, false
	}
	var choices, usage gjson.Result
	dup := false
	top.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "choices":
			dup = dup || choices.Exists()
			choices = v
		case "usage":
			dup = dup || usage.Exists()
			usage = v
		}
		return true
	})
	if dup || usage.Exists() && usage.Type != gjson.Null || !choices.IsArray() {
		return p, false
	}
	list := choices.Array()
	if len(list) != 1 || !list[0].IsObject() {
		return p, false
	}
	var index, finish, delta gjson.Result
	list[0].ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "index":
			dup = dup || index.Exists()
			index = v
		case "finish_reason":
			dup = dup || finish.Exists()
			finish = v
		case "delta":
			dup = dup || delta.Exists()
			delta = v
		}
		return true
	})
	if dup || index.Exists() && !isInt(index, 0) || finish.Exists() && finish.Type != gjson.Null || !delta.IsObject() {
		return p, false
	}
	var content, calls gjson.Result
	plain := true
	delta.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "content":
			dup = dup || content.Exists()
			content = v
		case "tool_calls":
			dup = dup || calls.Exists()
			calls = v
		default:
			plain = otherMemberIsInert(kind, k.Str, v)
		}
		return plain
	})
	if !plain || dup {
		return p, false
	}
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
	if len(list) != 1 || !list[0].IsObject() {
		return p, false
	}
	var index, function gjson.Result
	dup := false
	list[0].ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "index":
			dup = dup || index.Exists()
			index = v
		case "function":
			dup = dup || function.Exists()
			function = v
		}
		return true
	})
	if dup || !function.IsObject() {
		return p, false
	}
	var args gjson.Result
	function.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "arguments" {
			dup = dup || args.Exists()
			args = v
		}
		return true
	})
	at := int64(0) // an absent index is 0, as the SDK reads it
	if index.Exists() {
		n, err := strconv.ParseInt(index.Raw, 10, 64)
		if err != nil || n < 0 {
			return p, false
		}
		at = n
	}
	if dup || args.Type != gjson.String {
		return p, false
	}
	return plainPiece{text: args.Str, call: at}, true
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
