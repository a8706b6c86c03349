package llm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"charm.land/fantasy"
	"charm.land/fantasy/providers/google"

	"parley/agentcore/llm/llmtest"
)

// Every streamed answer the Gemini API gave in fantasy's recordings:
// text, thinking, one and several tool calls, thought signatures, JSON
// objects.
var geminiStreamCassettes = []string{
	"TestGoogleCommon/gemini-2.5-flash/simple_streaming.yaml",
	"TestGoogleCommon/gemini-2.5-flash/tool_streaming.yaml",
	"TestGoogleCommon/gemini-2.5-flash/multi_tool_streaming.yaml",
	"TestGoogleCommon/gemini-2.5-pro/simple_streaming.yaml",
	"TestGoogleCommon/gemini-2.5-pro/tool_streaming.yaml",
	"TestGoogleCommon/gemini-2.5-pro/multi_tool_streaming.yaml",
	"TestGoogleCommon/gemini-3-pro-preview/simple_streaming.yaml",
	"TestGoogleCommon/gemini-3-pro-preview/tool_streaming.yaml",
	"TestGoogleCommon/gemini-3-pro-preview/multi_tool_streaming.yaml",
	"TestGoogleThinking/gemini-2.5-flash/thinking-streaming.yaml",
	"TestGoogleThinking/gemini-2.5-pro/thinking-streaming.yaml",
	"TestGoogleThinking/gemini-3-pro-preview/thinking-streaming.yaml",
	"TestGoogleObjectGeneration/gemini-2.5-flash/complex_object_streaming.yaml",
	"TestGoogleObjectGeneration/gemini-3-pro-preview/complex_object_streaming.yaml",
}

// Parley's reader yields the parts fantasy's loop yields, on real
// answers; only the usage differs, where fantasy adds up Gemini's running
// totals (TestGeminiUsageOfRecording).
func TestGeminiReaderMatchesFantasy(t *testing.T) {
	req := Request{Messages: []Message{{Role: RoleUser, Text: "weather?"}}, Tools: []ToolSpec{weatherTool}}
	streams := 0
	for _, name := range geminiStreamCassettes {
		for i, in := range llmtest.LoadCassette(t, name).Interactions {
			if !strings.Contains(in.Request.URL, streamGeneratePath) || in.Response.Code != 200 {
				continue
			}
			streams++
			t.Run(fmt.Sprintf("%s/%d", strings.TrimSuffix(name, ".yaml"), i), func(t *testing.T) {
				m := openGeminiBody(t, in.Response.Body)
				ours, theirs := fantasyParts(t, m, sdkGemini, req), fantasyParts(t, m, sdkNone, req)
				if len(ours) == 0 || ours[len(ours)-1].Type != fantasy.StreamPartTypeFinish {
					t.Fatalf("no finish: %+v", ours)
				}
				if !reflect.DeepEqual(comparable(ours), comparable(theirs)) {
					t.Errorf("ours:\n%s\nfantasy's:\n%s", dump(ours), dump(theirs))
				}
			})
		}
	}
	if streams < 20 {
		t.Errorf("only %d recorded streams replayed", streams)
	}
}

// openGeminiBody opens a Gemini model on a server that answers every
// request with body.
func openGeminiBody(t *testing.T, body string) *model {
	t.Helper()
	w := wires[slices.IndexFunc(wires, func(w wire) bool { return w.name == google.Name })]
	return openBench(t, w, benchServer(t, body)).(*model)
}

// fantasyParts runs one attempt at req and returns what it forwards.
func fantasyParts(t *testing.T, m *model, sdk sdkStream, req Request) []fantasy.StreamPart {
	t.Helper()
	call, err := toCall(req, m.provider, m.modelID)
	if err != nil {
		t.Fatal(err)
	}
	a := &attempt{parts: make(chan fantasy.StreamPart), sdk: sdk}
	go a.read(withGeminiCall(t.Context(), newGeminiCall(req)), m.lm, call)
	var out []fantasy.StreamPart
	for p := range a.parts {
		out = append(out, p)
	}
	return out
}

// comparable names the tool calls by their order, as both sides make up
// an id for a call Gemini sent without one, and drops the usage.
func comparable(parts []fantasy.StreamPart) []fantasy.StreamPart {
	ids := map[string]string{}
	rename := func(id string) string {
		if id == "" {
			return ""
		}
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("call-%d", len(ids))
		}
		return ids[id]
	}
	out := make([]fantasy.StreamPart, len(parts))
	for i, p := range parts {
		switch p.Type {
		case fantasy.StreamPartTypeToolInputStart, fantasy.StreamPartTypeToolInputDelta,
			fantasy.StreamPartTypeToolInputEnd, fantasy.StreamPartTypeToolCall:
			p.ID = rename(p.ID)
		case fantasy.StreamPartTypeReasoningEnd:
			if md, ok := p.ProviderMetadata[google.Name].(*google.ReasoningMetadata); ok {
				c := *md
				c.ToolID = rename(c.ToolID)
				p.ProviderMetadata = fantasy.ProviderMetadata{google.Name: &c}
			}
		case fantasy.StreamPartTypeFinish:
			p.Usage = fantasy.Usage{}
		}
		out[i] = p
	}
	return out
}

func dump(parts []fantasy.StreamPart) string {
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprintf(&b, "  %s id=%q name=%q delta=%.60q input=%.60q finish=%q", p.Type, p.ID, p.ToolCallName, p.Delta, p.ToolCallInput, p.FinishReason)
		if md, ok := p.ProviderMetadata[google.Name].(*google.ReasoningMetadata); ok {
			fmt.Fprintf(&b, " signature=%d bytes tool=%q", len(md.Signature), md.ToolID)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// geminiData is one streamed chunk as Gemini frames it.
func geminiData(json string) string { return "data: " + json + "\r\n\r\n" }

const (
	geminiHello  = `{"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4}}`
	geminiFinish = `{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":5,"cachedContentTokenCount":1,"totalTokenCount":10}}`
	geminiBusy   = `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
)

// A failure Gemini reports in the middle of a 200 answer ends the stream
// with its status and words, after the text that came before it; so does
// a stream that is not Gemini's.
func TestGeminiStreamFailures(t *testing.T) {
	cases := []struct {
		name, body, text, err string
	}{
		{"error chunk", geminiData(geminiHello) + geminiData(geminiBusy) + geminiData(geminiFinish),
			"Hello", "google: 503 Service Unavailable: The model is overloaded. Please try again later."},
		{"error line", geminiData(geminiHello) + geminiBusy + "\n\n" + geminiData(geminiFinish),
			"Hello", "google: 503 Service Unavailable: The model is overloaded. Please try again later."},
		{"error object over lines", geminiData(geminiHello) + "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted.\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n",
			"Hello", "google: 429 Too Many Requests: Resource has been exhausted."},
		{"garbage", geminiData(geminiHello) + "<html>bad gateway</html>\n\n",
			"Hello", `google: invalid Gemini stream event: "<html>bad gateway</html>"`},
		{"malformed chunk", geminiData(geminiHello) + geminiData(`{"candidates":[{"content":`),
			"Hello", "google: malformed data in the response stream: read a Gemini stream chunk: unexpected end of JSON input"},
		{"cut before the finish", geminiData(geminiHello),
			"Hello", "google: stream transport error: unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := openGeminiBody(t, tc.body)
			parts, err := collect(t, m, hello)
			if got := joined(ofType(parts, PartTextDelta)); got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The usage is the last chunk's, thinking and cached tokens too (Gemini's
// prompt count includes the cached tokens, its candidates leave the thoughts
// out: Usage counts them as the other providers do); a refused prompt
// finishes as filtered content.
func TestGeminiStreamFinish(t *testing.T) {
	cases := []struct {
		name, body, reason string
		usage              Usage
	}{
		{"stop", geminiData(geminiHello) + geminiData(geminiFinish), "stop",
			Usage{InputTokens: 3 - 1, OutputTokens: 2 + 5, TotalTokens: 10, ReasoningTokens: 5, CachedTokens: 1}},
		{"last chunk unended", geminiData(geminiHello) + "data: " + geminiFinish, "stop",
			Usage{InputTokens: 3 - 1, OutputTokens: 2 + 5, TotalTokens: 10, ReasoningTokens: 5, CachedTokens: 1}},
		{"blocked prompt", geminiData(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}}`), "content-filter",
			Usage{InputTokens: 7, TotalTokens: 7}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := collect(t, openGeminiBody(t, tc.body), hello)
			if err != nil {
				t.Fatal(err)
			}
			f := parts[len(parts)-1]
			if f.Type != PartFinish || f.FinishReason != tc.reason || f.Usage != tc.usage {
				t.Errorf("finish %+v, want %q with %+v", f, tc.reason, tc.usage)
			}
		})
	}
}

// The reader finds the same events however the body is cut into reads,
// and an event longer than its buffer whole.
func FuzzGeminiEvents(f *testing.F) {
	f.Add([]byte(geminiData(geminiHello)+geminiData(geminiFinish)), uint8(3))
	f.Add([]byte("data: a\ndata: b\n\n: comment\nevent: x\ndata:c\r\n\r\n"+geminiBusy+"\n\ndata: "+strings.Repeat("x", 5000)), uint8(0))
	f.Add([]byte("{\n\"error\":{\"code\":1}}\n\ndata: after"), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		read := func(r io.Reader) (out []string) {
			events := geminiEvents{r: bufio.NewReaderSize(r, 16)}
			for {
				ev, err := events.next()
				if errors.Is(err, io.EOF) {
					return out
				}
				if err != nil {
					return append(out, "error: "+err.Error())
				}
				out = append(out, string(ev))
			}
		}
		whole := read(strings.NewReader(string(data)))
		split := read(&chopped{data: data, n: int(step)%13 + 1})
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("read whole %q, in pieces %q", whole, split)
		}
	})
}
