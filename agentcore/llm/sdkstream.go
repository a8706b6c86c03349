package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/google"
	"charm.land/fantasy/providers/openai"
	"charm.land/fantasy/providers/openaicompat"
	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"
)

// Streaming in time linear in the answer's length.
//
// fantasy v0.41.2's Chat Completions adapter (openai, openai-compatible,
// ollama, openrouter) feeds every chunk to openai-go's
// ChatCompletionAccumulator, which appends each delta to the whole text
// and the whole arguments with string +=, and appends each argument delta
// to its own growing string too; its anthropic adapter runs
// anthropic-sdk-go's Message.Accumulate on every event, which appends
// each text delta to the whole block with string +=; its google adapter
// appends each text delta to a copy of the whole text it never reads
// (sdkgemini.go). Every delta copies everything before it: 1 MiB in
// 16-byte deltas copies about 32 GiB. fantasy has no option to skip any
// of them.
//
// So fantasy still builds and sends the request (prompt, tools, options,
// headers, the errors of a failed response) and Parley reads the response
// of a successful call itself, with the SDK's own stream types
// (openai-go's ssestream of ChatCompletionChunk, anthropic-sdk-go's of
// MessageStreamEventUnion, genai's GenerateContentResponse), into the same
// fantasy stream parts fantasy's loop would yield. The response is taken
// at the HTTP client: fantasy's openai and anthropic Stream send the
// request before they return their iterator, which is then never run;
// genai sends Gemini's only inside the iterator, which therefore runs, on
// an empty body (captured.detach).

// sdkStream names the provider whose successful stream Parley reads
// itself; the zero value leaves the stream to fantasy.
type sdkStream int

const (
	sdkNone       sdkStream = iota
	sdkOpenAI               // Chat Completions as OpenAI sends it
	sdkCompat               // …with reasoning_content (openai-compatible, ollama)
	sdkOpenRouter           // …with OpenRouter's reasoning_details and usage
	sdkAnthropic            // Anthropic's Messages stream (sdkanthropic.go)
	sdkGemini               // Gemini's streamGenerateContent (sdkgemini.go)
)

// capture says which response of an attempt Parley reads.
func (k sdkStream) capture() *captured {
	switch k {
	case sdkAnthropic:
		return &captured{path: messagesPath}
	case sdkGemini:
		return &captured{path: streamGeneratePath, detach: true}
	}
	return &captured{path: chatCompletionsPath}
}

// read reads a successful streaming response into fantasy's parts.
func (k sdkStream) read(ctx context.Context, resp *http.Response, yield func(fantasy.StreamPart) bool) {
	switch k {
	case sdkAnthropic:
		streamMessages(ctx, resp, yield)
	case sdkGemini:
		streamGenerate(ctx, resp, yield)
	default:
		streamChat(ctx, resp, k, yield)
	}
}

// chatCompletionsPath ends the path of a Chat Completions request; other
// requests of the same provider (OpenAI's Responses API) stay fantasy's.
const chatCompletionsPath = "/chat/completions"

// captured receives the response of the attempt's streaming request.
type captured struct {
	path string // the request path's suffix to take
	// detach hands the SDK an empty body in place of the one taken, for an
	// adapter whose iterator must run because it sends the request.
	detach bool
	resp   *http.Response
}

type capturedKey struct{}

func withCapture(ctx context.Context, c *captured) context.Context {
	return context.WithValue(ctx, capturedKey{}, c)
}

// captureTransport hands a successful response to the attempt that asked
// for it; everything else passes through untouched.
type captureTransport struct{ next http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req, err := spliced(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	if c, ok := req.Context().Value(capturedKey{}).(*captured); ok && c.resp == nil && strings.HasSuffix(req.URL.Path, c.path) {
		if err := pageInstead(resp); err != nil {
			return nil, err
		}
		c.resp = resp
		if c.detach {
			empty := *resp
			empty.Body = http.NoBody
			return &empty, nil
		}
	}
	return resp, err
}

// capturing returns a copy of c (nil: a default client) whose transport
// lets an attempt take its response.
func capturing(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.Transport = captureTransport{next: cmp.Or[http.RoundTripper](out.Transport, http.DefaultTransport)}
	return &out
}

// chatToolCall is a tool call being streamed. Its arguments grow in a
// builder, so each delta costs its own length.
type chatToolCall struct {
	id, name string
	args     strings.Builder
	finished bool
}

func (tc *chatToolCall) input() string {
	if tc.args.Len() == 0 {
		return "{}"
	}
	return tc.args.String()
}

// streamChat reads a Chat Completions response as fantasy's openai
// adapter does (v0.41.2, languageModel.Stream), less its accumulators.
func streamChat(ctx context.Context, resp *http.Response, kind sdkStream, yield func(fantasy.StreamPart) bool) {
	events := ssestream.NewDecoder(resp)
	defer events.Close()
	// reasoning is open between a reasoning part and its end: the chunks
	// then go whole to the adapters' reasoning hooks, which end it.
	reasoning := false
	yield = watchReasoning(yield, &reasoning)

	var (
		activeText   bool
		toolCalls    = map[int64]*chatToolCall{}
		usage        fantasy.Usage
		finishReason string
		sawToolCalls bool // the accumulator's first choice has tool calls
		extraCtx     = map[string]any{}
		router       openRouterReasoning
	)
	extra := func(chunk openaisdk.ChatCompletionChunk) bool {
		switch kind {
		case sdkCompat:
			var ok bool
			extraCtx, ok = openaicompat.StreamExtraFunc(chunk, yield, extraCtx)
			return ok
		case sdkOpenRouter:
			return router.chunk(chunk, yield)
		}
		return true
	}
	// closeBefore ends the open calls with an index below index, in
	// index order.
	closeBefore := func(index int64) bool {
		for _, idx := range slices.Sorted(maps.Keys(toolCalls)) {
			tc := toolCalls[idx]
			if idx >= index || tc.finished {
				continue
			}
			if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputEnd, ID: tc.id}) {
				return false
			}
			tc.finished = true
		}
		return true
	}

	// onText and onArguments are a chunk's text and the next piece of a
	// known call's arguments, from a whole chunk or a plain one.
	onText := func(text string) bool {
		if !activeText {
			activeText = true
			if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextStart, ID: "0"}) {
				return false
			}
		}
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextDelta, ID: "0", Delta: text})
	}
	endText := func() bool {
		if !activeText {
			return true
		}
		activeText = false
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextEnd, ID: "0"})
	}
	onArguments := func(tc *chatToolCall, args string) bool {
		if tc.finished || args == "" {
			return true
		}
		tc.args.WriteString(args)
		// ToolCallInput: the input so far (Part.InputSoFar).
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputDelta, ID: tc.id, Delta: args, ToolCallInput: tc.args.String()})
	}

	var err error
	done := false
	for events.Next() {
		data := events.Event().Data
		// As ssestream.Stream: [DONE] ends the chunks, an event with an
		// error member ends the stream with it.
		if done {
			continue
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			done = true
			continue
		}
		if ep := gjson.GetBytes(data, "error"); ep.Exists() {
			err = &ssestream.StreamError{Message: "received error while streaming: " + ep.String(), Event: events.Event()}
			break
		}
		if strings.HasPrefix(events.Event().Type, "thread.") {
			// The SDK reads these as {"event", "data"}: a chunk of nothing.
			usage = fantasy.Usage{}
			continue
		}
		if !reasoning && plainChunks {
			if p, ok := readPlain(data, kind); ok {
				usage = fantasy.Usage{} // as a chunk without usage
				if p.call < 0 {
					if !onText(p.text) {
						return
					}
					continue
				}
				if tc, known := toolCalls[p.call]; known {
					sawToolCalls = true // a call piece in the first choice
					if !endText() || !onArguments(tc, p.text) {
						return
					}
					continue
				}
			}
		}
		var chunk openaisdk.ChatCompletionChunk
		if err = json.Unmarshal(data, &chunk); err != nil {
			break
		}
		if kind == sdkOpenRouter {
			usage = openRouterUsage(chunk)
		} else {
			usage, _ = openai.DefaultStreamUsageFunc(chunk, extraCtx, nil)
		}
		for _, choice := range chunk.Choices {
			if choice.FinishReason != "" {
				finishReason = choice.FinishReason
			}
			if choice.Index == 0 && len(choice.Delta.ToolCalls) > 0 {
				sawToolCalls = true
			}
			if choice.Delta.Content != "" && !onText(choice.Delta.Content) {
				return
			}
			if len(choice.Delta.ToolCalls) > 0 {
				if !endText() {
					return
				}
				for _, d := range choice.Delta.ToolCalls {
					if tc, ok := toolCalls[d.Index]; ok {
						if !onArguments(tc, d.Function.Arguments) {
							return
						}
						continue
					}
					// Some servers (Ollama) send empty calls or leave out fields.
					if d.Function.Name == "" && d.Function.Arguments == "" {
						continue
					}
					typ := cmp.Or(d.Type, "function")
					id := cmp.Or(d.ID, fmt.Sprintf("tool-call-%d", d.Index))
					if typ != "function" {
						yield(fantasy.StreamPart{
							Type:  fantasy.StreamPartTypeError,
							Error: &fantasy.Error{Title: "invalid provider response", Message: "expected 'function' type."},
						})
						return
					}
					// A new index means the calls before it are complete.
					if !closeBefore(d.Index) {
						return
					}
					if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputStart, ID: id, ToolCallName: d.Function.Name}) {
						return
					}
					tc := &chatToolCall{id: id, name: d.Function.Name}
					tc.args.WriteString(d.Function.Arguments)
					toolCalls[d.Index] = tc
					if d.Function.Arguments != "" {
						if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputDelta, ID: id, Delta: d.Function.Arguments, ToolCallInput: tc.args.String()}) {
							return
						}
					}
				}
			}
			if !extra(chunk) {
				return
			}
		}
		for _, choice := range chunk.Choices {
			for _, a := range deltaAnnotations(choice.Delta) {
				if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeSource, ID: a.URL, SourceType: fantasy.SourceTypeURL, URL: a.URL, Title: a.Title}) {
					return
				}
			}
		}
	}
	if err == nil {
		err = events.Err()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: chatStreamError(err)})
		return
	}
	if activeText && !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextEnd, ID: "0"}) {
		return
	}
	for _, idx := range slices.Sorted(maps.Keys(toolCalls)) {
		tc := toolCalls[idx]
		if !tc.finished && !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputEnd, ID: tc.id}) {
			return
		}
		tc.finished = true
		if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolCall, ID: tc.id, ToolCallName: tc.name, ToolCallInput: tc.input()}) {
			return
		}
	}
	reason := openai.DefaultMapFinishReasonFunc(finishReason)
	if sawToolCalls {
		reason = fantasy.FinishReasonToolCalls
	}
	// A stream cut before its finish reason, not in a tool-call turn, is
	// retryable, as fantasy has it.
	if finishReason == "" && reason != fantasy.FinishReasonToolCalls {
		err := ctx.Err()
		if err == nil {
			err = fantasy.NewIncompleteStreamError()
		}
		yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: err})
		return
	}
	yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeFinish, Usage: usage, FinishReason: reason})
}

// deltaAnnotations reads the url_citation annotations some servers put
// in a delta (OpenAI's search models, OpenRouter's web plugin).
func deltaAnnotations(delta openaisdk.ChatCompletionChunkChoiceDelta) []openaisdk.ChatCompletionMessageAnnotationURLCitation {
	raw, ok := delta.JSON.ExtraFields["annotations"]
	if !ok {
		return nil
	}
	var list []struct {
		Type        string `json:"type"`
		URLCitation *struct {
			URL   *string `json:"url"`
			Title *string `json:"title"`
		} `json:"url_citation"`
	}
	if json.Unmarshal([]byte(raw.Raw()), &list) != nil {
		return nil
	}
	var out []openaisdk.ChatCompletionMessageAnnotationURLCitation
	for _, a := range list {
		if a.Type == "url_citation" && a.URLCitation != nil && a.URLCitation.URL != nil && a.URLCitation.Title != nil {
			out = append(out, openaisdk.ChatCompletionMessageAnnotationURLCitation{URL: *a.URLCitation.URL, Title: *a.URLCitation.Title})
		}
	}
	return out
}

// chatStreamError words a failure while reading the stream as fantasy's
// openai adapter does.
func chatStreamError(err error) error {
	var apiErr *openaisdk.Error
	if errors.As(err, &apiErr) {
		pe := &fantasy.ProviderError{
			Title:      cmp.Or(fantasy.ErrorTitleForStatusCode(apiErr.StatusCode), "provider request failed"),
			Message:    apiErr.Message,
			Cause:      apiErr,
			StatusCode: apiErr.StatusCode,
		}
		if apiErr.Response != nil {
			pe.ResponseHeaders = map[string]string{}
			for k, v := range apiErr.Response.Header {
				if len(v) > 0 {
					pe.ResponseHeaders[strings.ToLower(k)] = v[len(v)-1]
				}
			}
		}
		return pe
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var envelope struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &envelope) // best effort, as fantasy's
		return &fantasy.ProviderError{
			Title:          "stream error",
			Message:        cmp.Or(envelope.Error.Message, se.Message),
			Cause:          se,
			ResponseBody:   se.Event.Data,
			TransientError: fantasy.TransientStreamErrorTypes[cmp.Or(envelope.Error.Type, envelope.Error.Code)],
		}
	}
	return fantasy.WrapTransportError(err)
}

// openRouterUsage is fantasy's openrouter stream usage (prompt_tokens
// include the cached ones), with the tokens written to the cache
// (prompt_tokens_details.cache_write_tokens, which they include too) apart.
func openRouterUsage(chunk openaisdk.ChatCompletionChunk) fantasy.Usage {
	u := chunk.Usage
	if u.TotalTokens == 0 {
		return fantasy.Usage{}
	}
	cached := u.PromptTokensDetails.CachedTokens
	var written int64
	if f, ok := u.PromptTokensDetails.JSON.ExtraFields["cache_write_tokens"]; ok {
		_ = json.Unmarshal([]byte(f.Raw()), &written) // absent or odd: none written
		written = max(written, 0)
	}
	input := max(u.PromptTokens-cached-written, 0)
	return fantasy.Usage{
		InputTokens:         input,
		OutputTokens:        u.CompletionTokens,
		TotalTokens:         input + u.CompletionTokens + cached + written,
		ReasoningTokens:     u.CompletionTokensDetails.ReasoningTokens,
		CacheReadTokens:     cached,
		CacheCreationTokens: written,
	}
}

// openRouterReasoning yields OpenRouter's reasoning_details as fantasy's
// openrouter adapter does, less the summaries it keeps for metadata
// Parley does not read.
type openRouterReasoning struct {
	started   bool
	format    string
	summaries int // OpenAI-style summaries begun
}

func (r *openRouterReasoning) chunk(chunk openaisdk.ChatCompletionChunk, yield func(fantasy.StreamPart) bool) bool {
	if len(chunk.Choices) == 0 {
		return true
	}
	choice := chunk.Choices[0]
	var data struct {
		ReasoningDetails []struct {
			ID        string `json:"id,omitempty"`
			Type      string `json:"type,omitempty"`
			Text      string `json:"text,omitempty"`
			Data      string `json:"data,omitempty"`
			Format    string `json:"format,omitempty"`
			Summary   string `json:"summary,omitempty"`
			Signature string `json:"signature,omitempty"`
			Index     int    `json:"index"`
		} `json:"reasoning_details,omitempty"`
	}
	if _, ok := choice.Delta.JSON.ExtraFields["reasoning_details"]; ok {
		if err := json.Unmarshal([]byte(choice.Delta.RawJSON()), &data); err != nil {
			yield(fantasy.StreamPart{
				Type:  fantasy.StreamPartTypeError,
				Error: &fantasy.Error{Title: "stream error", Message: "error unmarshalling delta", Cause: err},
			})
			return false
		}
	}
	const id = "0"
	delta := func(text string) bool {
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningDelta, ID: id, Delta: text})
	}
	end := func(md fantasy.ProviderMetadata) bool {
		r.started = false
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningEnd, ID: id, ProviderMetadata: md})
	}
	geminiEnd := func(signature, toolID string) bool {
		return end(fantasy.ProviderMetadata{google.Name: &google.ReasoningMetadata{Signature: signature, ToolID: toolID}})
	}
	if !r.started {
		if len(data.ReasoningDetails) == 0 {
			return true
		}
		d := data.ReasoningDetails[0]
		responses := strings.HasPrefix(d.Format, "openai-responses") || strings.HasPrefix(d.Format, "xai-responses")
		if responses && d.Data != "" {
			// Only encrypted thinking: started and ended at once.
			return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: id, Delta: d.Summary}) && end(nil)
		}
		if strings.HasPrefix(d.Format, "google-gemini") && d.Type == "reasoning.encrypted" {
			return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: id}) && geminiEnd(d.Data, d.ID)
		}
		r.started, r.format = true, d.Format
		if responses {
			r.summaries = 1
		}
		if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: id}) {
			return false
		}
		text := d.Summary
		if strings.Contains(d.Format, "google-gemini") || strings.Contains(d.Format, "anthropic-claude") {
			text = d.Text
		}
		if text == "" {
			return true
		}
		return delta(text)
	}
	if len(data.ReasoningDetails) == 0 {
		// Anthropic sends its signature after the tool calls.
		if strings.HasPrefix(r.format, "anthropic-claude") {
			return true
		}
		if choice.Delta.Content != "" || len(choice.Delta.ToolCalls) > 0 {
			return end(nil)
		}
		return true
	}
	d := data.ReasoningDetails[0]
	switch {
	case strings.HasPrefix(d.Format, "openai-responses") || strings.HasPrefix(d.Format, "xai-responses"):
		if d.Data != "" {
			return end(nil)
		}
		if d.Index < r.summaries {
			return delta(d.Summary)
		}
		r.summaries++ // a new summary starts on a new line
		return delta("\n" + d.Summary)
	case strings.HasPrefix(d.Format, "anthropic-claude"):
		if d.Signature != "" {
			return delta(d.Text) && end(nil)
		}
		return delta(d.Text)
	case strings.HasPrefix(d.Format, "google-gemini") && d.Type == "reasoning.encrypted":
		return geminiEnd(d.Data, d.ID)
	}
	return delta(d.Text)
}
