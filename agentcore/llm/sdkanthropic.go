package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/anthropic"
	anthropicsdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// Anthropic's Messages stream, read as fantasy's anthropic adapter does
// (v0.41.2, languageModel.Stream) but without anthropic-sdk-go's
// Message.Accumulate, which fantasy runs on every event and which appends
// each text and thinking delta to the whole block with string +=.

// messagesPath ends the path of a Messages request.
const messagesPath = "/v1/messages"

// messageBlock is a content block being streamed.
type messageBlock struct {
	block     anthropicsdk.ContentBlockUnion // as content_block_start had it
	input     []byte                         // tool input, grown per delta
	signature strings.Builder
}

func streamMessages(ctx context.Context, resp *http.Response, yield func(fantasy.StreamPart) bool) {
	stream := ssestream.NewStream[anthropicsdk.MessageStreamEventUnion](ssestream.NewDecoder(resp), nil)
	defer stream.Close()

	var (
		blocks  []*messageBlock
		id      string
		stop    anthropicsdk.StopReason
		usage   anthropicsdk.Usage
		sawStop bool
	)
	block := func(i int64) *messageBlock {
		if i < 0 || i >= int64(len(blocks)) {
			return nil
		}
		return blocks[i]
	}
	for stream.Next() {
		ev := stream.Current()
		index := fmt.Sprintf("%d", ev.Index)
		switch ev.Type {
		case "message_start":
			id, usage, stop = ev.Message.ID, ev.Message.Usage, ev.Message.StopReason
		case "message_delta":
			stop = ev.Delta.StopReason
			usage.OutputTokens = ev.Usage.OutputTokens
			if ev.Usage.JSON.InputTokens.Valid() {
				usage.InputTokens = ev.Usage.InputTokens
			}
			if ev.Usage.JSON.CacheCreationInputTokens.Valid() {
				usage.CacheCreationInputTokens = ev.Usage.CacheCreationInputTokens
			}
			if ev.Usage.JSON.CacheReadInputTokens.Valid() {
				usage.CacheReadInputTokens = ev.Usage.CacheReadInputTokens
			}
		case "content_block_start":
			// Blocks start in order; the SDK's accumulator ignores one
			// that does not, and so do we.
			if ev.Index == int64(len(blocks)) {
				b := &messageBlock{}
				blocks = append(blocks, b)
				if b.block.UnmarshalJSON([]byte(ev.ContentBlock.RawJSON())) == nil {
					b.input = append(b.input, b.block.Input...)
					b.signature.WriteString(b.block.Signature)
				}
			}
			var p fantasy.StreamPart
			switch ev.ContentBlock.Type {
			case "text":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeTextStart, ID: index}
			case "thinking":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: index}
			case "redacted_thinking":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: index, ProviderMetadata: anthropicReasoning("", ev.ContentBlock.Data)}
			case "tool_use":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputStart, ID: ev.ContentBlock.ID, ToolCallName: ev.ContentBlock.Name}
			case "server_tool_use":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputStart, ID: ev.ContentBlock.ID, ToolCallName: ev.ContentBlock.Name, ProviderExecuted: true}
			default:
				continue
			}
			if !yield(p) {
				return
			}
		case "content_block_delta":
			b := block(ev.Index)
			var p fantasy.StreamPart
			switch ev.Delta.Type {
			case "text_delta":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeTextDelta, ID: index, Delta: ev.Delta.Text}
			case "thinking_delta":
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningDelta, ID: index, Delta: ev.Delta.Thinking}
			case "signature_delta":
				if b != nil {
					b.signature.WriteString(ev.Delta.Signature)
				}
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningDelta, ID: index, ProviderMetadata: fantasy.ProviderMetadata{
					anthropic.Name: &anthropic.ReasoningOptionMetadata{Signature: ev.Delta.Signature},
				}}
			case "input_json_delta":
				if b == nil {
					continue
				}
				if pj := ev.Delta.PartialJSON; pj != "" {
					if string(b.input) == "{}" {
						b.input = b.input[:0]
					}
					b.input = append(b.input, pj...)
				}
				p = fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputDelta, ID: b.block.ID, ToolCallInput: ev.Delta.PartialJSON}
			default:
				continue
			}
			if !yield(p) {
				return
			}
		case "content_block_stop":
			b := block(ev.Index)
			if b == nil {
				continue
			}
			if !json.Valid(b.input) && len(b.input) > 0 {
				b.input = []byte("{}") // a cut-off call, as the SDK leaves it
			}
			if !messageBlockStop(b, index, yield) {
				return
			}
		case "message_stop":
			sawStop = true
		}
	}
	if err := stream.Err(); err != nil && !errors.Is(err, io.EOF) {
		yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: messagesStreamError(err)})
		return
	}
	// A socket closed after only one of message_delta and message_stop
	// is retryable, as fantasy has it.
	if !sawStop || stop == "" {
		err := ctx.Err()
		if err == nil {
			err = fantasy.NewIncompleteStreamError()
		}
		yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: err})
		return
	}
	yield(fantasy.StreamPart{
		Type:         fantasy.StreamPartTypeFinish,
		ID:           id,
		FinishReason: anthropicFinishReason(string(stop)),
		Usage: fantasy.Usage{
			InputTokens:         usage.InputTokens,
			OutputTokens:        usage.OutputTokens,
			TotalTokens:         usage.InputTokens + usage.OutputTokens,
			CacheCreationTokens: usage.CacheCreationInputTokens,
			CacheReadTokens:     usage.CacheReadInputTokens,
		},
		ProviderMetadata: fantasy.ProviderMetadata{},
	})
}

// messageBlockStop yields what ends block b.
func messageBlockStop(b *messageBlock, index string, yield func(fantasy.StreamPart) bool) bool {
	cb := b.block
	switch cb.Type {
	case "text":
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextEnd, ID: index})
	case "thinking":
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningEnd, ID: index, ProviderMetadata: anthropicReasoning(b.signature.String(), "")})
	case "redacted_thinking":
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningEnd, ID: index, ProviderMetadata: anthropicReasoning("", cb.Data)})
	case "tool_use", "server_tool_use":
		executed := cb.Type == "server_tool_use"
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputEnd, ID: cb.ID, ProviderExecuted: executed}) &&
			yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolCall, ID: cb.ID, ToolCallName: cb.Name, ToolCallInput: string(b.input), ProviderExecuted: executed})
	case "web_search_tool_result":
		var (
			results []anthropic.WebSearchResultItem
			md      fantasy.ProviderMetadata
		)
		for _, item := range cb.Content.OfWebSearchResultBlockArray {
			if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeSource, ID: item.URL, SourceType: fantasy.SourceTypeURL, URL: item.URL, Title: item.Title}) {
				return false
			}
			results = append(results, anthropic.WebSearchResultItem{URL: item.URL, Title: item.Title, EncryptedContent: item.EncryptedContent, PageAge: item.PageAge})
		}
		switch {
		case len(results) > 0:
			md = fantasy.ProviderMetadata{anthropic.Name: &anthropic.WebSearchResultMetadata{Results: results}}
		case cb.Content.ErrorCode != "":
			md = fantasy.ProviderMetadata{anthropic.Name: &anthropic.WebSearchResultMetadata{ErrorCode: string(cb.Content.ErrorCode)}}
		}
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolResult, ID: cb.ToolUseID, ToolCallName: "web_search", ProviderExecuted: true, ProviderMetadata: md})
	}
	return true
}

func anthropicReasoning(signature, redacted string) fantasy.ProviderMetadata {
	switch {
	case signature != "":
		return fantasy.ProviderMetadata{anthropic.Name: &anthropic.ReasoningOptionMetadata{Signature: signature}}
	case redacted != "":
		return fantasy.ProviderMetadata{anthropic.Name: &anthropic.ReasoningOptionMetadata{RedactedData: redacted}}
	}
	return nil
}

// anthropicFinishReason is fantasy's mapping of a stop reason.
func anthropicFinishReason(r string) fantasy.FinishReason {
	switch r {
	case "end_turn", "pause_turn", "stop_sequence":
		return fantasy.FinishReasonStop
	case "max_tokens", "model_context_window_exceeded":
		return fantasy.FinishReasonLength
	case "tool_use":
		return fantasy.FinishReasonToolCalls
	case "refusal", "content_filtered", "guardrail_intervened":
		return fantasy.FinishReasonContentFilter
	}
	return fantasy.FinishReasonUnknown
}

// messagesStreamError words a failure while reading the stream as
// fantasy's anthropic adapter does.
func messagesStreamError(err error) error {
	var apiErr *anthropicsdk.Error
	if errors.As(err, &apiErr) {
		pe := &fantasy.ProviderError{
			Title:          cmp.Or(fantasy.ErrorTitleForStatusCode(apiErr.StatusCode), "provider request failed"),
			Message:        apiErr.Error(),
			Cause:          apiErr,
			StatusCode:     apiErr.StatusCode,
			TransientError: fantasy.TransientStreamErrorTypes[string(apiErr.Type())],
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
	// A mid-stream error event: the SDK reports it with this prefix only.
	if _, payload, ok := strings.Cut(err.Error(), "received error while streaming:"); ok {
		payload = strings.TrimSpace(payload)
		var envelope struct {
			Error *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(payload), &envelope) == nil && envelope.Error != nil && (envelope.Error.Type != "" || envelope.Error.Message != "") {
			title := strings.ReplaceAll(envelope.Error.Type, "_", " ")
			switch envelope.Error.Type {
			case "overloaded_error":
				title = "provider overloaded"
			case "rate_limit_error":
				title = "rate limit exceeded"
			case "":
				title = "provider stream error"
			}
			return &fantasy.ProviderError{
				Title:          title,
				Message:        cmp.Or(envelope.Error.Message, payload),
				Cause:          err,
				ResponseBody:   []byte(payload),
				TransientError: fantasy.TransientStreamErrorTypes[envelope.Error.Type],
			}
		}
	}
	return fantasy.WrapTransportError(err)
}
