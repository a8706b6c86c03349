package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/google"
	"google.golang.org/genai"
)

// Gemini's stream, read as fantasy's google adapter does (v0.41.2,
// languageModel.Stream) but without the copy of the reply it keeps for
// nothing: it appends every text delta to the whole text with string +=
// (currentContent, never read).
//
// genai sends the request only inside fantasy's iterator, from a prompt
// fantasy converts with unexported code, so the iterator does run: the
// capture hands it an empty body (captured.detach), genai reads no chunk,
// and Parley reads the real body here, one genai GenerateContentResponse
// per event, as genai's own stream does.

// streamGeneratePath ends the path of a streamGenerateContent request.
const streamGeneratePath = ":streamGenerateContent"

// geminiMaxEvent bounds one event of the stream, as genai bounds it
// (256 MiB: a longer one fails the stream).
const geminiMaxEvent = 256 << 20

func streamGenerate(ctx context.Context, resp *http.Response, yield func(fantasy.StreamPart) bool) {
	defer resp.Body.Close()
	events := geminiEvents{r: bufio.NewReader(resp.Body)}

	var (
		activeText, activeReasoning bool
		blocks                      int // block ids handed out, text and reasoning alike
		textID, reasoningID         string
		calls                       int
		usage                       fantasy.Usage
		finish                      fantasy.FinishReason
		blocked                     bool // the prompt was refused (promptFeedback)
	)
	nextID := func() string {
		id := strconv.Itoa(blocks)
		blocks++
		return id
	}
	fail := func(err error) { yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeError, Error: err}) }
	reasoningEnd := func(md *google.ReasoningMetadata) fantasy.StreamPart {
		return fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningEnd, ID: reasoningID, ProviderMetadata: fantasy.ProviderMetadata{google.Name: md}}
	}
	// signed ends the open reasoning block with the signature of the part
	// that follows it, or gives that signature a block of its own.
	signed := func(sig []byte, toolID string) bool {
		md := &google.ReasoningMetadata{Signature: string(sig), ToolID: toolID}
		if activeReasoning {
			activeReasoning = false
			return yield(reasoningEnd(md))
		}
		if sig == nil {
			return true
		}
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: reasoningID}) && yield(reasoningEnd(md))
	}
	endText := func() bool {
		if !activeText {
			return true
		}
		activeText = false
		return yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextEnd, ID: textID})
	}

	for {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(geminiStreamError(err))
			return
		}
		var chunk genai.GenerateContentResponse
		if err := json.Unmarshal(data, &chunk); err != nil {
			fail(fmt.Errorf("read a Gemini stream chunk: %w", err))
			return
		}
		if len(chunk.Candidates) == 0 && chunk.UsageMetadata == nil && chunk.PromptFeedback == nil {
			// Gemini reports a failure mid-stream as a chunk of its own.
			if err := geminiErrorChunk(data); err != nil {
				fail(geminiStreamError(err))
				return
			}
		}
		var cand *genai.Candidate
		if len(chunk.Candidates) > 0 {
			cand = chunk.Candidates[0] // the adapter reads the first candidate only
		}
		if cand != nil && cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p == nil:
				case p.Text != "" && p.Thought:
					if !endText() {
						return
					}
					if !activeReasoning {
						activeReasoning, reasoningID = true, nextID()
						if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningStart, ID: reasoningID}) {
							return
						}
					}
					if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningDelta, ID: reasoningID, Delta: p.Text}) {
						return
					}
				case p.Text != "":
					if !activeText {
						activeText, textID = true, nextID()
						if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextStart, ID: textID}) {
							return
						}
					}
					if !signed(p.ThoughtSignature, "") ||
						!yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeTextDelta, ID: textID, Delta: p.Text}) {
						return
					}
				case p.FunctionCall != nil:
					fc := p.FunctionCall
					id := cmp.Or(fc.ID, newGeminiCallID())
					if !endText() || !signed(p.ThoughtSignature, id) {
						return
					}
					input := "{}" // a call without args (fantasy would send "null")
					if fc.Args != nil {
						b, err := json.Marshal(fc.Args)
						if err != nil {
							fail(fmt.Errorf("encode the arguments of Gemini's call to %s: %w", fc.Name, err))
							return
						}
						input = string(b)
					}
					if !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputStart, ID: id, ToolCallName: fc.Name}) ||
						!yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputDelta, ID: id, Delta: input}) ||
						!yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolInputEnd, ID: id}) ||
						!yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeToolCall, ID: id, ToolCallName: fc.Name, ToolCallInput: input}) {
						return
					}
					calls++
				}
			}
		}
		if u := chunk.UsageMetadata; u != nil && u.TotalTokenCount != 0 {
			// Each chunk counts the answer so far: the last one is the total
			// (fantasy adds them up).
			// The prompt count includes the cached tokens and the
			// candidates leave the thoughts out, which are billed as
			// output: Usage counts input without the cache, output with
			// the reasoning, as the other providers report them.
			usage = fantasy.Usage{
				InputTokens:     max(int64(u.PromptTokenCount)-int64(u.CachedContentTokenCount), 0),
				OutputTokens:    int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
				TotalTokens:     int64(u.TotalTokenCount),
				ReasoningTokens: int64(u.ThoughtsTokenCount),
				CacheReadTokens: int64(u.CachedContentTokenCount),
			}
		}
		if cand != nil && cand.FinishReason != "" {
			finish = geminiFinishReason(cand.FinishReason)
		}
		if f := chunk.PromptFeedback; f != nil && f.BlockReason != "" {
			blocked = true
		}
	}
	if !endText() {
		return
	}
	if activeReasoning && !yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeReasoningEnd, ID: reasoningID}) {
		return
	}
	switch {
	case calls > 0:
		finish = fantasy.FinishReasonToolCalls
	case finish == "" && blocked:
		// A refused prompt has no candidate to carry a finish reason
		// (fantasy calls it an incomplete stream and retries it).
		finish = fantasy.FinishReasonContentFilter
	case finish == "":
		// Cut before a finish reason: retryable, as fantasy has it.
		err := ctx.Err()
		if err == nil {
			err = fantasy.NewIncompleteStreamError()
		}
		fail(err)
		return
	}
	yield(fantasy.StreamPart{Type: fantasy.StreamPartTypeFinish, Usage: usage, FinishReason: finish})
}

// geminiEvents reads the server-sent events of a streamGenerateContent
// answer: each event's "data:" lines hold one GenerateContentResponse. An
// event of any other kind is what genai takes it for, a failure: an error
// object, or garbage. Lines are read with ReadSlice, so an event of any
// length costs its length once.
type geminiEvents struct {
	r     *bufio.Reader
	line  []byte // a line longer than r's buffer, gathered
	data  []byte // the event's data so far
	other []byte // the event's text, once a line is not an SSE field
}

// next returns the data of the next event, io.EOF after the last one, or
// the failure an event reports.
func (s *geminiEvents) next() ([]byte, error) {
	s.data, s.other = s.data[:0], s.other[:0]
	have := false // a data line was read
	for {
		line, err := s.readLine()
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil, err
		}
		switch {
		case len(line) == 0:
		case len(s.other) > 0:
			s.other = append(append(s.other, '\n'), line...)
		case line[0] == ':': // a comment
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			switch string(field) {
			case "data":
				if have {
					s.data = append(s.data, '\n')
				}
				s.data, have = append(s.data, bytes.TrimPrefix(value, []byte(" "))...), true
			case "event", "id", "retry":
			default:
				s.other = append(s.other, line...)
			}
		}
		if len(s.data) > geminiMaxEvent || len(s.other) > geminiMaxEvent {
			return nil, errGeminiEventTooLong
		}
		if len(line) > 0 && !eof {
			continue
		}
		// The event ends at a blank line or with the stream.
		switch {
		case len(s.other) > 0:
			if err := geminiErrorChunk(s.other); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("invalid Gemini stream event: %.200q", s.other)
		case have:
			return s.data, nil
		case eof:
			return nil, io.EOF
		}
	}
}

var errGeminiEventTooLong = fmt.Errorf("a Gemini stream event is over %d MiB", geminiMaxEvent>>20)

// readLine returns the next line without its line ending; io.EOF may come
// with the last line.
func (s *geminiEvents) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(s.line)+len(frag) > geminiMaxEvent {
				return nil, errGeminiEventTooLong
			}
			s.line = append(s.line, frag...)
			continue
		}
		line := frag
		if len(s.line) > 0 {
			s.line = append(s.line, frag...)
			line = s.line
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), err
	}
}

// geminiErrorChunk returns the error a chunk reports, {"error":{"code",
// "message","status"}}, or nil.
func geminiErrorChunk(data []byte) error {
	var chunk struct {
		Error *genai.APIError `json:"error"`
	}
	if json.Unmarshal(data, &chunk) != nil || chunk.Error == nil {
		return nil
	}
	return *chunk.Error
}

// geminiStreamError words a failure while reading the stream as fantasy's
// google adapter does (toProviderErr).
func geminiStreamError(err error) error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return &fantasy.ProviderError{
			Title:        cmp.Or(fantasy.ErrorTitleForStatusCode(apiErr.Code), "provider stream error"),
			Message:      cmp.Or(apiErr.Message, apiErr.Status),
			Cause:        err,
			StatusCode:   apiErr.Code,
			ResponseBody: []byte(apiErr.Message),
		}
	}
	return fantasy.WrapTransportError(err)
}

// geminiFinishReason is fantasy's mapping of a finish reason.
func geminiFinishReason(r genai.FinishReason) fantasy.FinishReason {
	switch r {
	case genai.FinishReasonStop:
		return fantasy.FinishReasonStop
	case genai.FinishReasonMaxTokens:
		return fantasy.FinishReasonLength
	case genai.FinishReasonSafety, genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent,
		genai.FinishReasonSPII, genai.FinishReasonImageSafety:
		return fantasy.FinishReasonContentFilter
	case genai.FinishReasonRecitation, genai.FinishReasonLanguage, genai.FinishReasonMalformedFunctionCall:
		return fantasy.FinishReasonError
	case genai.FinishReasonOther:
		return fantasy.FinishReasonOther
	}
	return fantasy.FinishReasonUnknown
}

// newGeminiCallID names a function call Gemini sent without an id, as
// fantasy's adapter does: a random (version 4) UUID.
func newGeminiCallID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
