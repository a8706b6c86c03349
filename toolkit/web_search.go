package toolkit

import (
	"parley/agentcore"
	"parley/agentcore/llm"
)

// WebSearchTool is web_search: the model provider's own web search (spec
// §1.4, Mastra's webSearchTool), run by the provider while the model
// answers. OpenAI models search through the Responses API, Anthropic
// models through web_search_20250305, Gemini models through Google Search
// grounding — Gemini 3 and later beside the other tools; Gemini 2 allows
// Google Search only in a request without function tools, so it is not
// offered to Gemini 2 models. Any other provider fails the model call with
// "web_search is not available for <provider> models: use an OpenAI,
// Anthropic or Gemini model" (llm.CheckProviderTool asks beforehand, and
// names the model's limit for older Gemini models).
//
// Nothing runs here, so there is no input schema, no Execute and no
// description of ours (the provider describes its tool to the model).
// The search arrives in the model's stream as a provider-executed call
// with {"query"} as input, its llm.WebSearchResult, and source parts.
func WebSearchTool() *agentcore.Tool {
	return &agentcore.Tool{ID: llm.WebSearch, ProviderDefined: true}
}
