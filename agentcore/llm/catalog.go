package llm

import (
	"fmt"
	"strings"
)

// Info is what Parley knows about a model beyond its name: how much context
// it reads and what its tokens cost.
type Info struct {
	// ContextWindow is how many tokens (prompt and answer) one call holds;
	// 0: unknown.
	ContextWindow int64
	// Priced says the prices below are known (a local model is priced at 0).
	Priced bool
	// US dollars per million tokens: uncached input, input read from the
	// provider's prompt cache, output (reasoning included).
	Input, CachedInput, Output float64
	// CacheWrite is the price of input written to the prompt cache (per
	// million tokens): Anthropic's 5-minute cache writes cost 1.25 times
	// the input price; OpenAI and Gemini's implicit caching charge nothing
	// extra (and report no writes).
	CacheWrite float64
	// Reasoning: the model can think before it answers (the chat's
	// Thinking control is shown). False for the models known to have no
	// reasoning, and for unknown models true: nothing says they cannot.
	Reasoning bool
	// MaxOutput is the most tokens one answer may have (the provider's
	// max_tokens limit); 0: unknown.
	MaxOutput int64
	// NoVision: the model is known not to read images (an image would
	// only get the provider's 400). Unknown models are sent them.
	NoVision bool
}

// entry is a catalog line: window, priced, input, cached input, output.
type entry struct {
	window                     int64
	priced                     bool
	input, cachedInput, output float64
}

// anthropicCacheWrite is the 5-minute cache-write multiplier of Anthropic's
// pricing page.
const anthropicCacheWrite = 1.25

// noReasoning are the catalog's models without a thinking setting.
var noReasoning = map[string]bool{
	"gpt-4.1": true, "gpt-4.1-mini": true, "gpt-4.1-nano": true, "gpt-4o": true, "gpt-4o-mini": true,
	"claude-3-5-sonnet": true, "claude-3-5-haiku": true, "gemini-2.0-flash": true, "scripted": true,
}

// noVision are the catalog's models that read no images (OpenAI's model
// page for o3-mini: text input only).
var noVision = map[string]bool{"o3-mini": true}

// noPDF are the providers that read no PDFs: Ollama's OpenAI-compatible
// API takes text and base64 images only (its compatibility page lists no
// file parts), and Parley has no PDF text extraction to send instead.
// Every other provider gets fantasy's document part: Anthropic's document
// block, OpenAI's and OpenRouter's file part with a data URL, Gemini's
// inline data; an OpenAI-compatible server is sent OpenAI's and decides.
var noPDF = map[string]bool{"ollama": true}

// maxOutput is the most output tokens per call, from each provider's
// model pages (Anthropic's without the 128k beta header), as of August
// 2025; a model missing here has no known limit.
var maxOutput = map[string]int64{
	"gpt-5": 128_000, "gpt-5-mini": 128_000, "gpt-5-nano": 128_000,
	"gpt-4.1": 32_768, "gpt-4.1-mini": 32_768, "gpt-4.1-nano": 32_768, "gpt-4o": 16_384, "gpt-4o-mini": 16_384,
	"o3": 100_000, "o3-mini": 100_000, "o4-mini": 100_000,
	"claude-opus-4": 32_000, "claude-sonnet-4": 64_000, "claude-3-7-sonnet": 64_000, "claude-3-5-sonnet": 8_192,
	"claude-3-5-haiku": 8_192, "claude-haiku-4-5": 64_000,
	"gemini-2.5-pro": 65_536, "gemini-2.5-flash": 65_536, "gemini-2.5-flash-lite": 65_536, "gemini-2.0-flash": 8_192,
}

// catalog is keyed by model name without provider; a dated or suffixed
// name ("claude-sonnet-4-20250514", "gpt-4o-2024-08-06") takes the entry of
// its longest matching prefix.
//
// Prices: standard (not batch, not priority) list prices in USD per 1M
// tokens from each provider's public pricing page — OpenAI API pricing,
// Anthropic Claude pricing, Google Gemini API pricing — as of August 2025.
// Gemini 2.5 Pro is priced at its ≤200k-token prompt tier. Anthropic's
// cache writes are priced by anthropicCacheWrite. To add a
// model, add a line; prices change, so keep the date above honest.
var catalog = map[string]entry{
	// OpenAI
	"gpt-5":        {400_000, true, 1.25, 0.125, 10},
	"gpt-5-mini":   {400_000, true, 0.25, 0.025, 2},
	"gpt-5-nano":   {400_000, true, 0.05, 0.005, 0.40},
	"gpt-4.1":      {1_047_576, true, 2, 0.50, 8},
	"gpt-4.1-mini": {1_047_576, true, 0.40, 0.10, 1.60},
	"gpt-4.1-nano": {1_047_576, true, 0.10, 0.025, 0.40},
	"gpt-4o":       {128_000, true, 2.50, 1.25, 10},
	"gpt-4o-mini":  {128_000, true, 0.15, 0.075, 0.60},
	"o3":           {200_000, true, 2, 0.50, 8},
	"o3-mini":      {200_000, true, 1.10, 0.55, 4.40},
	"o4-mini":      {200_000, true, 1.10, 0.275, 4.40},
	// Anthropic
	"claude-opus-4":     {200_000, true, 15, 1.50, 75},
	"claude-sonnet-4":   {200_000, true, 3, 0.30, 15},
	"claude-3-7-sonnet": {200_000, true, 3, 0.30, 15},
	"claude-3-5-sonnet": {200_000, true, 3, 0.30, 15},
	"claude-3-5-haiku":  {200_000, true, 0.80, 0.08, 4},
	"claude-haiku-4-5":  {200_000, true, 1, 0.10, 5},
	// Google
	"gemini-2.5-pro":        {1_048_576, true, 1.25, 0.31, 10},
	"gemini-2.5-flash":      {1_048_576, true, 0.30, 0.075, 2.50},
	"gemini-2.5-flash-lite": {1_048_576, true, 0.10, 0.025, 0.40},
	"gemini-2.0-flash":      {1_048_576, true, 0.10, 0.025, 0.40},
	// Parley's scripted demo model costs nothing.
	"scripted": {128_000, true, 0, 0, 0},
}

// freeProviders run on this machine: known price 0, window unknown (it is
// the server's setting).
var freeProviders = map[string]bool{"ollama": true, "demo": true}

// Lookup returns what is known about the model of a provider/model string
// ("openrouter/anthropic/claude-sonnet-4" is looked up as claude-sonnet-4).
func Lookup(spec string) (Info, bool) {
	provider, name, _ := strings.Cut(strings.ToLower(strings.TrimSpace(spec)), "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:] // a router's vendor/model
	}
	name, _, _ = strings.Cut(name, ":") // ollama tags, openrouter variants (":free" is not priced here)
	best := ""
	for k := range catalog {
		if len(k) > len(best) && (name == k || strings.HasPrefix(name, k+"-") || strings.HasPrefix(name, k+"@")) {
			best = k
		}
	}
	if best != "" {
		e := catalog[best]
		info := Info{ContextWindow: e.window, Priced: e.priced, Input: e.input, CachedInput: e.cachedInput, Output: e.output}
		info.Reasoning = !noReasoning[best]
		info.MaxOutput = maxOutput[best]
		info.NoVision = noVision[best]
		if strings.HasPrefix(best, "claude-") {
			info.CacheWrite = info.Input * anthropicCacheWrite
		}
		return info, true
	}
	if freeProviders[provider] {
		return Info{Priced: true, Reasoning: provider != "demo"}, true
	}
	return Info{}, false
}

// CheckFile says why the model of spec ("provider/model") cannot be sent
// the file named name, of mediaType, so that it is refused before anything
// is sent: an image to a model known to read no images, a kind Parley
// sends to no model. nil when nothing says the model cannot read it: text
// (it goes as text, with its name), a PDF (a document part, or its text
// for a provider that takes none or a model that reads no PDFs: OpenAI
// reads them with its vision models only), and any file to a model the
// catalog does not know, whose provider decides.
func CheckFile(spec, name, mediaType string) error {
	mediaType, _, _ = strings.Cut(mediaType, ";")
	info, _ := Lookup(spec)
	switch {
	case strings.HasPrefix(mediaType, "text/"):
	case strings.HasPrefix(mediaType, "image/"):
		if info.NoVision {
			return fmt.Errorf("%s does not read images: choose a model that does, or remove %q", spec, name)
		}
	case mediaType == "application/pdf":
		// Taken as a document part, or sent as its text (pdfAsText).
	default:
		return fmt.Errorf("%q is %s, which Parley sends to no model as a file", name, mediaType)
	}
	return nil
}

// Cost is the price in USD of the given tokens: input at the full price,
// read from and written to the prompt cache, and output; ok is false when
// the price is not known.
func (i Info) Cost(input, cacheRead, cacheWrite, output int64) (usd float64, ok bool) {
	if !i.Priced {
		return 0, false
	}
	return (float64(input)*i.Input + float64(cacheRead)*i.CachedInput + float64(cacheWrite)*i.CacheWrite +
		float64(output)*i.Output) / 1e6, true
}
