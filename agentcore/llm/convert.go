package llm

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/anthropic"
	"charm.land/fantasy/providers/google"
	"charm.land/fantasy/providers/openai"
)

// UnsupportedToolError fails a request that asks for a provider-defined
// tool the model's provider (or the model itself) does not have.
type UnsupportedToolError struct {
	Tool     string // e.g. WebSearch
	Provider string // e.g. "ollama"
	// Model and Reason are set when the provider has the tool but this
	// model cannot use it (older Gemini models).
	Model, Reason string
}

func (e *UnsupportedToolError) Error() string {
	if e.Model != "" {
		return fmt.Sprintf("%s is not available for %s/%s: %s", e.Tool, e.Provider, e.Model, e.Reason)
	}
	if e.Tool == WebSearch {
		return fmt.Sprintf("web_search is not available for %s models: use an OpenAI, Anthropic or Gemini model", e.Provider)
	}
	return fmt.Sprintf("%s models have no provider tool %q", e.Provider, e.Tool)
}

// CheckProviderTool reports whether the model of modelSpec
// ("provider/model") has the provider-defined tool beside function tools,
// so that a caller can leave it out (or say why) before a request fails
// with the same *UnsupportedToolError. Gemini 2 models have web_search only
// in a request without function tools (see gemini.go): for them it reports
// the error such a request would get.
func CheckProviderTool(modelSpec, tool string) error {
	provider, modelID, _ := strings.Cut(modelSpec, "/")
	if provider == google.Name && tool == WebSearch {
		return geminiSearchError(modelID, true)
	}
	_, err := providerTool(provider, tool)
	return err
}

// providerTool is fantasy's definition of a provider-defined tool.
//
// Google is handled apart: fantasy v0.41.2's google adapter turns every
// non-function tool into an "unsupported tool" warning and never reads
// Gemini's grounding metadata, so geminiTransport sends Google Search and
// reads its results itself (gemini.go). fantasy has no OpenRouter web
// plugin yet.
func providerTool(provider, name string) (fantasy.Tool, error) {
	if name == WebSearch {
		switch provider {
		case openai.Name:
			return openai.WebSearchTool(nil), nil // Responses API only: see model.searchLM
		case anthropic.Name:
			return anthropic.WebSearchTool(nil), nil // web_search_20250305
		}
	}
	return nil, &UnsupportedToolError{Tool: name, Provider: provider}
}

// usesProviderTools reports whether req asks for a provider-defined tool.
func usesProviderTools(req Request) bool {
	return slices.ContainsFunc(req.Tools, func(t ToolSpec) bool { return t.ProviderDefined })
}

// hasFunctionTools reports whether req offers tools the caller runs.
func hasFunctionTools(req Request) bool {
	return slices.ContainsFunc(req.Tools, func(t ToolSpec) bool { return !t.ProviderDefined })
}

// userMessage is a user message with its files after its text; a message
// of files alone has no text part (Anthropic refuses an empty one). A file
// the model cannot read (CheckFile: an earlier message's, sent before the
// chat changed models) is named to it in a text part instead, never left
// out unsaid. Gemini reads no GIFs and Anthropic no image over 5 MB of
// base64: see files.go.
func userMessage(m Message, provider, modelID string) fantasy.Message {
	parts := make([]fantasy.MessagePart, 0, 1+len(m.Files))
	if m.Text != "" || len(m.Files) == 0 {
		parts = append(parts, fantasy.TextPart{Text: m.Text})
	}
	for _, f := range m.Files {
		if err := CheckFile(provider+"/"+modelID, f.Name, f.MediaType); err != nil {
			parts = append(parts, fantasy.TextPart{Text: fmt.Sprintf("[The attached file %q is not sent: %v]", f.Name, err)})
			continue
		}
		switch {
		case f.MediaType == "application/pdf" && pdfAsText(provider, lookupFor(provider, modelID)):
			text, err := pdfText(f.Data)
			if err != nil {
				text = fmt.Sprintf("[The attached PDF %q is not sent: %v]", f.Name, err)
			} else {
				text = fmt.Sprintf("<file name=%q type=\"text of a PDF\">\n%s\n</file>", f.Name, text)
			}
			parts = append(parts, fantasy.TextPart{Text: text})
			continue
		case strings.HasPrefix(f.MediaType, "text/"):
			// fantasy sends text files in shapes providers do not read
			// (OpenAI's file part without a data URL): text goes as text.
			parts = append(parts, fantasy.TextPart{Text: fmt.Sprintf("<file name=%q>\n%s\n</file>", f.Name, f.Data)})
			continue
		case provider == google.Name && f.MediaType == "image/gif":
			f = gifAsPNG(f)
		case provider == anthropic.Name && strings.HasPrefix(f.MediaType, "image/"):
			f = fitForClaude(f)
		}
		parts = append(parts, fantasy.FilePart{Filename: f.Name, MediaType: f.MediaType, Data: f.Data})
	}
	return fantasy.Message{Role: fantasy.MessageRoleUser, Content: parts}
}

// toCall converts a Request for modelID of provider into fantasy's prompt
// types.
func toCall(req Request, provider, modelID string) (fantasy.Call, error) {
	return toCallFor(req, provider, modelID, false)
}

// toCallFor is toCall for a call that goes to OpenAI's Responses API when
// responses is set (its provider options are of another type).
func toCallFor(req Request, provider, modelID string, responses bool) (fantasy.Call, error) {
	var call fantasy.Call
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			call.Prompt = append(call.Prompt, fantasy.NewSystemMessage(m.Text))
		case RoleUser:
			call.Prompt = append(call.Prompt, userMessage(m, provider, modelID))
		case RoleAssistant:
			var parts []fantasy.MessagePart
			if provider == anthropic.Name {
				// The thinking that led to the calls opens the message.
				for _, tc := range m.ToolCalls {
					parts = append(parts, anthropicThinkingParts(openAnthropicThinking(tc.Signature))...)
				}
			}
			if m.Text != "" {
				parts = append(parts, fantasy.TextPart{Text: m.Text})
			}
			for _, tc := range m.ToolCalls {
				if tc.ProviderExecuted {
					continue // see ToolCall.ProviderExecuted
				}
				if strings.HasPrefix(tc.Signature, anthropicEnvelope) {
					tc.Signature = ""
				}
				if sig, _ := openGeminiSignature(tc.Signature); sig != "" && provider == google.Name {
					// fantasy's google adapter attaches a signature to the
					// function call that follows a reasoning part carrying it.
					// Server-side parts riding on the signature go back
					// through geminiTransport.
					parts = append(parts, fantasy.ReasoningPart{ProviderOptions: fantasy.ProviderOptions{
						google.Name: &google.ReasoningMetadata{Signature: sig, ToolID: tc.ID},
					}})
				}
				parts = append(parts, fantasy.ToolCallPart{
					ToolCallID: tc.ID,
					ToolName:   tc.Name,
					Input:      cmp.Or(tc.Input, "{}"),
				})
			}
			if len(parts) == 0 {
				continue // providers reject empty assistant turns
			}
			call.Prompt = append(call.Prompt, fantasy.Message{Role: fantasy.MessageRoleAssistant, Content: parts})
		case RoleTool:
			parts := make([]fantasy.MessagePart, 0, len(m.ToolResults))
			for _, tr := range m.ToolResults {
				var out fantasy.ToolResultOutputContent = fantasy.ToolResultOutputContentText{Text: tr.Output}
				if tr.IsError {
					out = fantasy.ToolResultOutputContentError{Error: errors.New(tr.Output)}
				}
				parts = append(parts, fantasy.ToolResultPart{ToolCallID: tr.CallID, Output: out})
			}
			call.Prompt = append(call.Prompt, fantasy.Message{Role: fantasy.MessageRoleTool, Content: parts})
		default:
			return call, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		if t.ProviderDefined && provider == google.Name && t.Name == WebSearch {
			if err := geminiSearchError(modelID, hasFunctionTools(req)); err != nil {
				return call, err
			}
			continue // geminiTransport adds Google Search to the request
		}
		if t.ProviderDefined {
			tool, err := providerTool(provider, t.Name)
			if err != nil {
				return call, err
			}
			call.Tools = append(call.Tools, tool)
			continue
		}
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return call, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		call.Tools = append(call.Tools, fantasy.FunctionTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.ToolChoice != "" {
		choice := fantasy.ToolChoice(req.ToolChoice) // "auto", "none", "required" or a tool name
		call.ToolChoice = &choice
	}
	if req.MaxOutputTokens > 0 {
		call.MaxOutputTokens = &req.MaxOutputTokens
	}
	call.Temperature = req.Temperature
	call.TopP = req.TopP
	applyOptions(&call, req, provider, modelID, responses)
	return call, nil
}

// inputSchema decodes a tool's JSON Schema into the map fantasy wants.
// fantasy's anthropic and google adapters read "required" only as a
// []string and silently drop the []any that encoding/json produces, so
// every "required" list is turned into []string.
func inputSchema(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	fixRequired(schema)
	return schema, nil
}

func fixRequired(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if list, ok := e.([]any); ok && k == "required" {
				names := make([]string, 0, len(list))
				for _, n := range list {
					if s, ok := n.(string); ok {
						names = append(names, s)
					}
				}
				v[k] = names
				continue
			}
			fixRequired(e)
		}
	case []any:
		for _, e := range v {
			fixRequired(e)
		}
	}
}

// converter maps fantasy's stream parts to Parts, one stream at a time.
type converter struct {
	signatures map[string]string // tool call id → Gemini thought signature
	// executed holds the provider-executed calls by id. fantasy marks
	// only some of their parts (OpenAI's input end is unmarked, so are
	// Anthropic's input deltas), so the mark is carried by id.
	executed map[string]*executedCall
	held     []string        // ids of calls held back until their result
	sources  map[string]bool // URLs already yielded

	// gemini is the attempt's Gemini state (nil for other providers):
	// what geminiTransport read that fantasy does not pass on.
	gemini        *geminiCall
	searchID      string // the Gemini search call, once announced
	functionCalls int    // Gemini function calls converted so far

	// anthropic: Claude's thinking blocks are kept until the next tool
	// call, which carries them back (see anthropicEnvelope).
	anthropic bool
	thinking  []thinkingBlock
	thought   strings.Builder // the open thinking block's text
}

// executedCall is a call the provider runs itself.
type executedCall struct {
	name, input string
	held        bool
}

// parts converts fp into the parts worth yielding: none for block starts
// and ends, warnings, empty deltas and repeated sources; two when a held
// call is released with its result. On a Gemini stream a Google Search
// becomes a provider-executed web_search call as soon as geminiTransport
// has seen it, and its result and sources come before the finish.
func (c *converter) parts(fp fantasy.StreamPart) []Part {
	if c.gemini == nil {
		return c.convert(fp)
	}
	finish := fp.Type == fantasy.StreamPartTypeFinish
	if c.searchID != "" && !finish {
		return c.convert(fp)
	}
	seen := c.gemini.seen()
	var out []Part
	if seen.searched && c.searchID == "" {
		out = c.geminiSearchCall(seen)
	}
	if finish && c.searchID != "" {
		out = append(out, c.geminiSearchResult(seen)...)
	}
	return append(out, c.convert(fp)...)
}

// geminiSearchCall announces the Google Search seen so far.
func (c *converter) geminiSearchCall(seen geminiSeen) []Part {
	c.searchID = newSearchID()
	ec := c.execute(c.searchID, WebSearch)
	ec.input = "{}"
	if len(seen.queries) > 0 {
		b, _ := json.Marshal(struct { // a string: cannot fail
			Query string `json:"query"`
		}{geminiSearchQuery(seen.queries)})
		ec.input = string(b)
	}
	return []Part{
		{Type: PartToolInputStart, ToolCallID: c.searchID, ToolName: WebSearch, ProviderExecuted: true},
		c.executedCall(c.searchID, ec.input),
	}
}

// geminiSearchResult is the search's result, every query and page of it,
// and the pages as sources.
func (c *converter) geminiSearchResult(seen geminiSeen) []Part {
	out, _ := json.Marshal(WebSearchResult{Query: geminiSearchQuery(seen.queries), Results: seen.sources}) // plain strings: cannot fail
	parts := []Part{{
		Type:             PartToolResult,
		ToolCallID:       c.searchID,
		ToolName:         WebSearch,
		Result:           string(out),
		ProviderExecuted: true,
	}}
	for _, s := range seen.sources {
		parts = append(parts, c.source(s.URL, s.Title)...)
	}
	return parts
}

// source yields a source once per URL.
func (c *converter) source(url, title string) []Part {
	if url == "" || c.sources[url] {
		return nil
	}
	if c.sources == nil {
		c.sources = map[string]bool{}
	}
	c.sources[url] = true
	return []Part{{Type: PartSource, URL: url, Title: title}}
}

// signature is what a function call carries back: on Gemini, its thought
// signature sealed with the server-side parts before the call.
func (c *converter) signature(id string) string {
	if c.anthropic {
		if len(c.thinking) == 0 {
			return ""
		}
		sig := sealAnthropicThinking(c.thinking)
		c.thinking = nil // the message's first call carries them all
		return sig
	}
	sig := c.signatures[id]
	if c.gemini == nil {
		return sig
	}
	n := c.functionCalls
	c.functionCalls++
	if parts := c.gemini.boundTo(n); sig != "" || len(parts) > 0 {
		return sealGeminiSignature(sig, parts)
	}
	return ""
}

// convert maps one fantasy part as parts does, Gemini's search aside.
func (c *converter) convert(fp fantasy.StreamPart) []Part {
	one := func(p Part, ok bool) []Part {
		if !ok {
			return nil
		}
		return []Part{p}
	}
	switch fp.Type {
	case fantasy.StreamPartTypeTextDelta:
		return one(Part{Type: PartTextDelta, Text: fp.Delta}, fp.Delta != "")
	case fantasy.StreamPartTypeReasoningDelta:
		if c.anthropic {
			c.thought.WriteString(fp.Delta)
		}
		// Anthropic's signature deltas arrive as empty reasoning deltas.
		return one(Part{Type: PartReasoningDelta, Text: fp.Delta}, fp.Delta != "")
	case fantasy.StreamPartTypeReasoningEnd:
		if md, ok := fp.ProviderMetadata[anthropic.Name].(*anthropic.ReasoningOptionMetadata); ok && c.anthropic && md != nil {
			c.thinking = append(c.thinking, thinkingBlock{Text: c.thought.String(), Signature: md.Signature, Redacted: md.RedactedData})
		}
		c.thought.Reset()
		// Gemini hands out a function call's thought signature on the
		// reasoning block just before the call.
		if md, ok := fp.ProviderMetadata[google.Name].(*google.ReasoningMetadata); ok && md.ToolID != "" && md.Signature != "" {
			if c.signatures == nil {
				c.signatures = map[string]string{}
			}
			c.signatures[md.ToolID] = md.Signature
		}
		return nil
	case fantasy.StreamPartTypeToolInputStart:
		if fp.ProviderExecuted {
			c.execute(fp.ID, fp.ToolCallName)
		}
		return one(Part{Type: PartToolInputStart, ToolCallID: fp.ID, ToolName: fp.ToolCallName, ProviderExecuted: c.executed[fp.ID] != nil}, true)
	case fantasy.StreamPartTypeToolInputDelta:
		// OpenAI-style adapters put the fragment in Delta, Anthropic's in
		// ToolCallInput; with both (sdkstream's), ToolCallInput is the
		// input so far.
		delta := cmp.Or(fp.Delta, fp.ToolCallInput)
		p := Part{Type: PartToolInputDelta, ToolCallID: fp.ID, Text: delta, ProviderExecuted: c.executed[fp.ID] != nil}
		if fp.Delta != "" && strings.HasSuffix(fp.ToolCallInput, fp.Delta) {
			p.InputSoFar = fp.ToolCallInput
		}
		return one(p, delta != "")
	case fantasy.StreamPartTypeToolInputEnd:
		return one(Part{Type: PartToolInputEnd, ToolCallID: fp.ID, ProviderExecuted: c.executed[fp.ID] != nil}, true)
	case fantasy.StreamPartTypeToolCall:
		if !fp.ProviderExecuted {
			return one(Part{
				Type:       PartToolCall,
				ToolCallID: fp.ID,
				ToolName:   fp.ToolCallName,
				Input:      cmp.Or(fp.ToolCallInput, "{}"),
				Signature:  c.signature(fp.ID),
			}, true)
		}
		ec := c.execute(fp.ID, fp.ToolCallName)
		ec.input = fp.ToolCallInput
		if ec.input == "" {
			// OpenAI tells the query only with the result: the call
			// waits for it, so that it shows what was searched.
			ec.held = true
			c.held = append(c.held, fp.ID)
			return nil
		}
		return []Part{c.executedCall(fp.ID, ec.input)}
	case fantasy.StreamPartTypeToolResult:
		ec := c.execute(fp.ID, fp.ToolCallName)
		res := webSearchResult(fp.ProviderMetadata, ec.input)
		out, _ := json.Marshal(res) // plain strings: cannot fail
		var parts []Part
		if ec.held {
			ec.held = false
			c.held = slices.DeleteFunc(c.held, func(id string) bool { return id == fp.ID })
			input := "{}"
			if res.Query != "" {
				q, _ := json.Marshal(struct {
					Query string `json:"query"`
				}{res.Query})
				input = string(q)
			}
			parts = append(parts, c.executedCall(fp.ID, input))
		}
		return append(parts, Part{
			Type:             PartToolResult,
			ToolCallID:       fp.ID,
			ToolName:         ec.name,
			Result:           string(out),
			IsError:          res.Error != "",
			ProviderExecuted: true,
		})
	case fantasy.StreamPartTypeSource:
		return c.source(fp.URL, fp.Title)
	case fantasy.StreamPartTypeFinish:
		// A call whose result never came is released as it is, so that
		// no started call is left open.
		var parts []Part
		for _, id := range c.held {
			parts = append(parts, c.executedCall(id, "{}"))
		}
		c.held = nil
		return append(parts, Part{Type: PartFinish, Usage: usage(fp.Usage), FinishReason: finishReason(fp.FinishReason)})
	}
	return nil
}

// execute returns the provider-executed call id, registering it first.
func (c *converter) execute(id, name string) *executedCall {
	if c.executed == nil {
		c.executed = map[string]*executedCall{}
	}
	ec := c.executed[id]
	if ec == nil {
		ec = &executedCall{name: name}
		c.executed[id] = ec
	}
	if ec.name == "" {
		ec.name = name
	}
	return ec
}

func (c *converter) executedCall(id, input string) Part {
	return Part{Type: PartToolCall, ToolCallID: id, ToolName: c.executed[id].name, Input: input, ProviderExecuted: true}
}

// webSearchResult reads a search's result from the provider metadata of
// its tool-result part; input is the call's input, which holds
// Anthropic's query.
func webSearchResult(md fantasy.ProviderMetadata, input string) WebSearchResult {
	var r WebSearchResult
	var in struct {
		Query string `json:"query"`
	}
	if json.Unmarshal([]byte(input), &in) == nil {
		r.Query = in.Query
	}
	if m, ok := md[anthropic.Name].(*anthropic.WebSearchResultMetadata); ok && m != nil {
		for _, it := range m.Results {
			r.Results = append(r.Results, Source{URL: it.URL, Title: it.Title, PageAge: it.PageAge})
		}
		r.Error = m.ErrorCode
	}
	if m, ok := md[openai.Name].(*openai.WebSearchCallMetadata); ok && m != nil && m.Action != nil {
		r.Query = cmp.Or(r.Query, m.Action.Query)
		for _, s := range m.Action.Sources {
			r.Results = append(r.Results, Source{URL: s.URL})
		}
	}
	return r
}

func usage(u fantasy.Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		TotalTokens:      cmp.Or(u.TotalTokens, u.InputTokens+u.OutputTokens),
		ReasoningTokens:  u.ReasoningTokens,
		CachedTokens:     u.CacheReadTokens,
		CacheWriteTokens: u.CacheCreationTokens,
	}
}

func finishReason(r fantasy.FinishReason) string {
	switch r {
	case fantasy.FinishReasonStop, fantasy.FinishReasonLength, fantasy.FinishReasonToolCalls,
		fantasy.FinishReasonContentFilter, fantasy.FinishReasonError:
		return string(r)
	}
	return string(fantasy.FinishReasonOther)
}

// streamError is an error whose message is ours and whose chain is the
// provider's, so errors.Is(err, context.Canceled) and errors.As to
// *fantasy.ProviderError keep working.
type streamError struct {
	msg string
	err error
}

func (e *streamError) Error() string { return e.msg }
func (e *streamError) Unwrap() error { return e.err }

// describe words err as "provider: 401 Unauthorized: <provider's message>".
func describe(provider string, err error) error {
	cause, attempts := err, 1
	var re *fantasy.RetryError
	if errors.As(err, &re) && len(re.Errors) > 0 {
		cause, attempts = re.Errors[len(re.Errors)-1], len(re.Errors)
	}
	var (
		pe     *fantasy.ProviderError
		page   *htmlPageError
		syntax *json.SyntaxError
		msg    string
	)
	switch {
	case errors.As(cause, &page):
		msg = provider + ": " + page.Error()
	case errors.Is(cause, bufio.ErrTooLong):
		msg = fmt.Sprintf("%s: the provider sent a stream event over %d MiB, more than Parley reads", provider, sseMaxEvent>>20)
	case errors.As(cause, &pe) && pe.StatusCode != 0:
		if title, ok := htmlTitle(pe.Message); ok {
			msg = provider + ": " + htmlPageText(pe.StatusCode, title)
			break
		}
		msg = fmt.Sprintf("%s: %d %s", provider, pe.StatusCode, http.StatusText(pe.StatusCode))
		if r := reason(pe.Message); r != "" {
			msg += ": " + r
		}
	case errors.As(cause, &pe):
		msg = fmt.Sprintf("%s: %s", provider, pe.Error())
	case errors.As(cause, &syntax):
		msg = fmt.Sprintf("%s: malformed data in the response stream: %v", provider, cause)
	default:
		msg = fmt.Sprintf("%s: %v", provider, cause)
	}
	if attempts > 1 {
		msg += fmt.Sprintf(" (gave up after %d attempts)", attempts)
	}
	return &streamError{msg: msg, err: err}
}

// reason digs the provider's own words out of an error message. OpenAI's
// adapter hands over the message alone; Anthropic's hands over
// `POST "url": 401 Unauthorized {"type":"error","error":{"message":…}}`.
func reason(msg string) string {
	msg = strings.TrimSpace(msg)
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return msg
	}
	var body struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(msg[i:]), &body) != nil {
		return msg
	}
	var nested struct {
		Message string `json:"message"`
	}
	var plain string
	switch {
	case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
		return nested.Message
	case json.Unmarshal(body.Error, &plain) == nil && plain != "":
		return plain
	case body.Message != "":
		return body.Message
	}
	return msg
}
