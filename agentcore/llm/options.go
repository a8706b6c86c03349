package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/anthropic"
	"charm.land/fantasy/providers/google"
	"charm.land/fantasy/providers/openai"
	"charm.land/fantasy/providers/openrouter"
)

// Thinking is how hard a reasoning model thinks before it answers, as the
// chat header's control sets it: "" leaves the model's own default (nothing
// is sent), the other levels map to each provider's setting (see
// thinkingOptions).
type Thinking string

const (
	ThinkingDefault Thinking = ""
	ThinkingOff     Thinking = "off"
	ThinkingLow     Thinking = "low"
	ThinkingMedium  Thinking = "medium"
	ThinkingHigh    Thinking = "high"
)

// ThinkingLevels are the levels a user can choose, in the control's order.
var ThinkingLevels = []Thinking{ThinkingOff, ThinkingLow, ThinkingMedium, ThinkingHigh}

// ParseThinking reads a level; "" and "default" are the model's default.
func ParseThinking(s string) (Thinking, bool) {
	switch t := Thinking(strings.ToLower(strings.TrimSpace(s))); t {
	case ThinkingDefault, ThinkingOff, ThinkingLow, ThinkingMedium, ThinkingHigh:
		return t, true
	case "default":
		return ThinkingDefault, true
	}
	return "", false
}

// Anthropic extended-thinking budgets per level. Anthropic's minimum is
// 1,024; its docs suggest starting low and raising it, and past ~32k the
// returns diminish.
const (
	anthropicBudgetLow    = 2_048
	anthropicBudgetMedium = 8_192
	anthropicBudgetHigh   = 24_576
	// anthropicAnswerTokens is room for the answer after the thinking:
	// max_tokens must exceed the budget, and fantasy's default max_tokens
	// is 4,096.
	anthropicAnswerTokens = 4_096
)

// Gemini 2.5 thinking budgets per level (its range is 128–32,768 for Pro,
// 0–24,576 for Flash).
var geminiBudgets = map[Thinking]int64{ThinkingLow: 1_024, ThinkingMedium: 8_192, ThinkingHigh: 24_576}

// ProviderOptions are a caller's options for one provider each (Mastra's
// providerOptions); they win over what Thinking and the cache defaults set.
// Options for another provider than the model's are not used.
type ProviderOptions struct {
	Anthropic *AnthropicOptions
	OpenAI    *OpenAIOptions
	Google    *GoogleOptions
}

// AnthropicOptions: cacheControl, thinking and sendReasoning.
type AnthropicOptions struct {
	// NoCache turns Parley's cache breakpoints off for the call.
	NoCache bool
	// ThinkingBudget > 0 enables extended thinking with that budget.
	ThinkingBudget int64
	// SendReasoning false leaves earlier thinking out of the prompt.
	SendReasoning *bool
}

// OpenAIOptions: reasoningEffort and promptCacheKey.
type OpenAIOptions struct {
	ReasoningEffort string // minimal, low, medium, high …
	PromptCacheKey  string // overrides the chat's key
}

// GoogleOptions: thinkingConfig.
type GoogleOptions struct {
	ThinkingBudget  *int64
	IncludeThoughts *bool
	ThinkingLevel   string
}

// CacheKey is what a chat's requests carry as OpenAI's prompt_cache_key: a
// hash of the caller's key (the thread id), so that the provider sees a
// stable name for the chat and not Parley's id.
func CacheKey(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("parley-chat:" + key))
	return "parley-" + hex.EncodeToString(sum[:12])
}

// isAnthropicModel reports whether provider/modelID is Claude, directly or
// through OpenRouter.
func isAnthropicModel(provider, modelID string) bool {
	return provider == anthropic.Name || provider == openrouter.Name && strings.HasPrefix(modelID, "anthropic/")
}

// maxCacheBreakpoints is Anthropic's limit per request.
const maxCacheBreakpoints = 4

// markCache places Anthropic's cache breakpoints, at most four (Anthropic
// refuses a request with more). The caller's own come first: the messages
// req marks with CacheBreakpoint, the newest four if it marks more (a later
// breakpoint's prefix holds the earlier ones'). When auto is set, Parley's
// fill what is left, in this order, where the prompt's prefix is stable
// (Anthropic's prompt-caching guide: the cache prefix runs tools → system →
// messages, and a hit needs the prefix up to a breakpoint to be
// byte-identical):
//
//  1. the last tool definition: every tool, unchanged for the whole run;
//  2. the last system message: the system prompt (fantasy sends each
//     system message as one block of the system list);
//  3. the last message: written now, read by the next step;
//  4. the message before the last assistant message: where the previous
//     step's request ended, so that its cache write is read back exactly,
//     however many blocks the step added (the lookback is only 20).
//
// A message the caller marked already is not marked twice. fantasy puts a
// message's mark on its last part, a tool's on the tool.
func markCache(call *fantasy.Call, req Request, provider string, auto bool) {
	mark := fantasy.ProviderOptions{anthropic.Name: &anthropic.ProviderCacheControlOptions{
		CacheControl: anthropic.CacheControl{Type: "ephemeral"},
	}}
	n := 0
	at := func(i int) {
		if i < 0 || i >= len(call.Prompt) || n >= maxCacheBreakpoints || call.Prompt[i].ProviderOptions != nil {
			return
		}
		call.Prompt[i].ProviderOptions = mark
		n++
	}
	own := callerMarks(call, req, provider)
	for _, i := range own[max(0, len(own)-maxCacheBreakpoints):] {
		at(i)
	}
	if !auto {
		return
	}
	for i := len(call.Tools) - 1; i >= 0 && n < maxCacheBreakpoints; i-- {
		if ft, ok := call.Tools[i].(fantasy.FunctionTool); ok {
			ft.ProviderOptions = mark
			call.Tools[i] = ft
			n++
			break
		}
	}
	lastSystem, lastAssistant := -1, -1
	for i, m := range call.Prompt {
		switch m.Role {
		case fantasy.MessageRoleSystem:
			lastSystem = i
		case fantasy.MessageRoleAssistant:
			lastAssistant = i
		}
	}
	at(lastSystem)
	last := len(call.Prompt) - 1
	if last > lastSystem {
		at(last)
		if lastAssistant > lastSystem+1 {
			at(lastAssistant - 1)
		}
	}
}

// callerMarks are the indices in call.Prompt of the messages req marks with
// CacheBreakpoint, in order. toCallFor sends every system, user and tool
// message and every assistant message with something to send (sentAssistant
// says which); a mark on an assistant message left out goes to the message
// before it, whose prefix is the same. If the prompt does not line up with
// req, the caller's marks are not placed rather than misplaced.
func callerMarks(call *fantasy.Call, req Request, provider string) []int {
	var out []int
	j := 0
	for _, m := range req.Messages {
		if m.Role != RoleAssistant || sentAssistant(m, provider) {
			j++
		}
		if m.CacheBreakpoint && j > 0 && (len(out) == 0 || out[len(out)-1] != j-1) {
			out = append(out, j-1)
		}
	}
	if j != len(call.Prompt) {
		return nil
	}
	return out
}

// sentAssistant reports whether toCallFor sends m, an assistant message, to
// provider: it does when m has text, a tool call Parley ran, or (for
// Anthropic) the signed thinking before a call.
func sentAssistant(m Message, provider string) bool {
	if m.Text != "" {
		return true
	}
	for _, tc := range m.ToolCalls {
		if !tc.ProviderExecuted || provider == anthropic.Name && len(anthropicThinkingParts(openAnthropicThinking(tc.Signature))) > 0 {
			return true
		}
	}
	return false
}

// applyOptions sets the call's provider options for provider/modelID from
// req: the chat's cache key, its thinking level and the caller's own
// options; responses says the call goes to OpenAI's Responses API.
func applyOptions(call *fantasy.Call, req Request, provider, modelID string, responses bool) {
	if isAnthropicModel(provider, modelID) {
		markCache(call, req, provider, req.Options.Anthropic == nil || !req.Options.Anthropic.NoCache)
	}
	switch provider {
	case openai.Name:
		o := req.Options.OpenAI
		key := CacheKey(req.CacheKey)
		effort := openAIEffort(req.Thinking, modelID)
		if o != nil {
			if o.PromptCacheKey != "" {
				key = o.PromptCacheKey
			}
			if o.ReasoningEffort != "" {
				effort = o.ReasoningEffort
			}
		}
		var keyp *string
		if key != "" {
			keyp = &key
		}
		var effortp *openai.ReasoningEffort
		if effort != "" {
			effortp = openai.ReasoningEffortOption(openai.ReasoningEffort(effort))
		}
		if keyp == nil && effortp == nil {
			return
		}
		if responses {
			call.ProviderOptions = fantasy.ProviderOptions{openai.Name: &openai.ResponsesProviderOptions{PromptCacheKey: keyp, ReasoningEffort: effortp}}
		} else {
			call.ProviderOptions = fantasy.ProviderOptions{openai.Name: &openai.ProviderOptions{PromptCacheKey: keyp, ReasoningEffort: effortp}}
		}
	case anthropic.Name:
		var po anthropic.ProviderOptions
		budget := anthropicBudget(req.Thinking)
		if o := req.Options.Anthropic; o != nil {
			if o.ThinkingBudget > 0 {
				budget = o.ThinkingBudget
			}
			po.SendReasoning = o.SendReasoning
		}
		if budget > 0 {
			po.Thinking = &anthropic.ThinkingProviderOption{BudgetTokens: budget}
			// max_tokens must exceed the budget: the caller's limit is
			// the answer's, after the thinking.
			answer := anthropicAnswerTokens
			if req.MaxOutputTokens > 0 {
				answer = int(req.MaxOutputTokens)
			}
			max := budget + int64(answer)
			call.MaxOutputTokens = &max
		}
		if po.Thinking != nil || po.SendReasoning != nil {
			call.ProviderOptions = fantasy.ProviderOptions{anthropic.Name: &po}
		}
	case google.Name:
		tc := geminiThinking(req.Thinking, modelID)
		if o := req.Options.Google; o != nil {
			if tc == nil {
				tc = &google.ThinkingConfig{}
			}
			if o.ThinkingBudget != nil || o.ThinkingLevel != "" {
				tc.ThinkingBudget, tc.ThinkingLevel = nil, nil
			}
			if o.ThinkingBudget != nil {
				tc.ThinkingBudget = o.ThinkingBudget
			}
			if o.ThinkingLevel != "" {
				level := strings.ToUpper(o.ThinkingLevel) // Gemini's enum names
				tc.ThinkingLevel = &level
			}
			if o.IncludeThoughts != nil {
				tc.IncludeThoughts = o.IncludeThoughts
			}
		}
		if tc != nil {
			call.ProviderOptions = fantasy.ProviderOptions{google.Name: &google.ProviderOptions{ThinkingConfig: tc}}
		}
	case openrouter.Name:
		var r *openrouter.ReasoningOptions
		switch req.Thinking {
		case ThinkingOff:
			r = &openrouter.ReasoningOptions{Enabled: new(false)}
		case ThinkingLow, ThinkingMedium, ThinkingHigh:
			r = &openrouter.ReasoningOptions{Effort: openrouter.ReasoningEffortOption(openrouter.ReasoningEffort(req.Thinking))}
		}
		if r != nil {
			call.ProviderOptions = fantasy.ProviderOptions{openrouter.Name: &openrouter.ProviderOptions{Reasoning: r}}
		}
	}
}

// openAIEffort is OpenAI's reasoning_effort for a level. Off is "minimal"
// on GPT-5 models; the o-series cannot stop thinking, so off sends nothing
// there (their least is low).
func openAIEffort(t Thinking, modelID string) string {
	switch t {
	case ThinkingLow, ThinkingMedium, ThinkingHigh:
		return string(t)
	case ThinkingOff:
		if strings.HasPrefix(modelID, "gpt-5") {
			return "minimal"
		}
	}
	return ""
}

func anthropicBudget(t Thinking) int64 {
	switch t {
	case ThinkingLow:
		return anthropicBudgetLow
	case ThinkingMedium:
		return anthropicBudgetMedium
	case ThinkingHigh:
		return anthropicBudgetHigh
	}
	return 0 // off and default: no extended thinking, Anthropic's default
}

// geminiThinking is Gemini's thinking config for a level: Gemini 3 takes a
// thinking level (low or high), Gemini 2.5 a budget; thoughts are asked
// for so that the reasoning streams. Off sends nothing: fantasy raises a
// budget under 128 to 128, and 2.5 Pro cannot stop thinking.
func geminiThinking(t Thinking, modelID string) *google.ThinkingConfig {
	if t == ThinkingDefault || t == ThinkingOff {
		return nil
	}
	include := true
	if strings.HasPrefix(modelID, "gemini-3") {
		level := "HIGH" // Gemini's enum names
		if t == ThinkingLow {
			level = "LOW"
		}
		return &google.ThinkingConfig{ThinkingLevel: &level, IncludeThoughts: &include}
	}
	budget := geminiBudgets[t]
	return &google.ThinkingConfig{ThinkingBudget: &budget, IncludeThoughts: &include}
}

// anthropicEnvelope starts a ToolCall.Signature that carries Claude's
// thinking blocks: with extended thinking on, Anthropic requires the
// thinking that preceded a tool call to come back, unmodified and signed,
// at the start of the assistant message that made the call.
const anthropicEnvelope = "anthropic-thinking:"

// thinkingBlock is one thinking (or redacted thinking) block of a reply.
type thinkingBlock struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

func sealAnthropicThinking(blocks []thinkingBlock) string {
	b, _ := json.Marshal(blocks) // plain strings: cannot fail
	return anthropicEnvelope + string(b)
}

// openAnthropicThinking reads what sealAnthropicThinking wrote; anything
// else holds no thinking.
func openAnthropicThinking(s string) []thinkingBlock {
	rest, ok := strings.CutPrefix(s, anthropicEnvelope)
	if !ok {
		return nil
	}
	var blocks []thinkingBlock
	if json.Unmarshal([]byte(rest), &blocks) != nil {
		return nil
	}
	return blocks
}

// anthropicThinkingParts are the blocks as fantasy's reasoning parts.
func anthropicThinkingParts(blocks []thinkingBlock) []fantasy.MessagePart {
	parts := make([]fantasy.MessagePart, 0, len(blocks))
	for _, b := range blocks {
		if b.Signature == "" && b.Redacted == "" {
			continue // Anthropic rejects an unsigned block
		}
		parts = append(parts, fantasy.ReasoningPart{Text: b.Text, ProviderOptions: fantasy.ProviderOptions{
			anthropic.Name: &anthropic.ReasoningOptionMetadata{Signature: b.Signature, RedactedData: b.Redacted},
		}})
	}
	return parts
}
