package scripted

import "regexp"

// token is a word-ish token with its leading whitespace: a run of letters,
// digits, underscores and apostrophes, or one other character. Trailing
// whitespace is a token of its own, so the tokens always join back to the text.
var token = regexp.MustCompile(`\s*(?:[\p{L}\p{N}_']+|[^\s\p{L}\p{N}_'])|\s+`)

// split cuts text into word-ish tokens roughly as a model's tokenizer would.
func split(text string) []string {
	return token.FindAllString(text, -1)
}
