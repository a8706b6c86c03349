package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"charm.land/fantasy"
	"github.com/tidwall/gjson"

	"parley/agentcore/llm/llmtest"
)

// readChat runs streamChat over an SSE body with readPlain on or off and
// returns what it yielded, each part as one comparable line.
func readChat(t testing.TB, body string, kind sdkStream, plain bool) []string {
	t.Helper()
	was := plainChunks
	plainChunks = plain
	defer func() { plainChunks = was }()
	resp := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(body)),
	}
	var out []string
	streamChat(context.Background(), resp, kind, func(p fantasy.StreamPart) bool {
		var errText string
		if p.Error != nil {
			errText = p.Error.Error()
			p.Error = nil
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("part %+v: %v", p, err)
		}
		out = append(out, string(b)+" error="+errText)
		return true
	})
	return out
}

var chatKinds = []struct {
	name string
	kind sdkStream
}{{"openai", sdkOpenAI}, {"compat", sdkCompat}, {"openrouter", sdkOpenRouter}}

// samePartsBothWays fails the test when the plain reading of body yields
// anything other than the SDK's reading.
func samePartsBothWays(t testing.TB, name, body string) {
	t.Helper()
	for _, k := range chatKinds {
		want := readChat(t, body, k.kind, false)
		got := readChat(t, body, k.kind, true)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s as %s: plain chunks read differently\nplain:\n%s\nSDK:\n%s", name, k.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestPlainChunksReadAsTheSDKReadsThem replays every Chat Completions
// stream fantasy recorded from the live providers (OpenAI, Azure,
// OpenRouter, Groq, xAI, llama.cpp, Vercel, …) through both readings.
func TestPlainChunksReadAsTheSDKReadsThem(t *testing.T) {
	var streams, events, plain int
	for _, name := range llmtest.CassetteNames(t) {
		c := llmtest.LoadCassette(t, name)
		for i, in := range c.Interactions {
			body := in.Response.Body
			if in.Response.Code != http.StatusOK || !strings.Contains(body, "chat.completion.chunk") {
				continue
			}
			streams++
			for line := range strings.Lines(body) {
				if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
					// A text piece with nothing else to read: plain.
					if gjson.Get(data, "choices.0.delta.content").String() == "" ||
						gjson.Get(data, "choices.#").Int() != 1 ||
						gjson.Get(data, "choices.0.finish_reason").String() != "" ||
						gjson.Get(data, "usage.total_tokens").Exists() {
						continue
					}
					events++
					if _, ok := readPlain([]byte(data), sdkOpenAI); ok {
						plain++
					}
				}
			}
			samePartsBothWays(t, name+"#"+string(rune('0'+i)), body)
		}
	}
	t.Logf("%d recorded streams, %d pieces of text alone, %d read plain", streams, events, plain)
	if streams < 50 || plain*10 < events*9 {
		t.Fatalf("the recordings should hold at least 50 streams, nearly all their pieces of text alone read plain: %d streams, %d of %d plain", streams, plain, events)
	}
}

// hostileChunks are chunks a broken or hostile server might send, each
// placed in the middle of a stream that has text and an open call.
var hostileChunks = []string{
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"Content":"upper"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":5}}]}`,
	`{"choices":[{"index":0,"delta":{"content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":""}}]}`,
	`{"choices":[{"index":0,"delta":{"content":{"x":1}}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"t","tool_calls":[{"index":0,"function":{"arguments":"1"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"think","content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"hm"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"annotations":[{"type":"url_citation","url_citation":{"url":"javascript:alert(1)","title":"<b>"}}],"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":""}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":5}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}},{"index":1,"delta":{"content":"y"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"one"}}]}`,
	`{"choices":[{"index":"0","delta":{"content":"str"}}]}`,
	`{"choices":[{"index":0.0,"delta":{"content":"float"}}]}`,
	`{"choices":[{"index":-1,"delta":{"content":"neg"}}]}`,
	`{"choices":[{"delta":{"content":"no index"}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"c3","type":"function","function":{"name":"g","arguments":"{"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"other","type":"weird","function":{"name":"renamed","arguments":"\"k\""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":7}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":null}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a"}},{"index":0,"function":{"arguments":"b"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":"0","function":{"arguments":"s"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"noindex"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x","arguments":"y"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"first"}}],"choices":[{"index":0,"delta":{"content":"second"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"first"},"delta":{"content":"second"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\u00e9\ud83d\ude00 <script>alert(1)</script>"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\ud800 lone"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
	`{"choices":[{"index":0,"delta":{"content":"x"}}]`,
	`{"choices":[`,
	`[{"choices":[]}]`,
	`"just a string"`,
	`{}`,
	`{"choices":null}`,
	`{"choices":[null]}`,
	`{"choices":[{"index":0,"delta":null}]}`,
	`{"choices":[{"index":0,"delta":"text"}]}`,
	`{"error":{"message":"overloaded","type":"server_error"}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"error":null}`,
	`{"choices":[{"index":0,"delta":{"content":"x","role":"system","refusal":"no"}}],"obfuscation":"abc","provider":"p"}`,
	`{"choices":[{"index":0,"delta":{"content":"x","Reasoning":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","reasoning_\u0063ontent":"escaped"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","reasoning":"","reasoning_details":[]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","reasoning_details":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","REASONING_DETAILS":[{"type":"reasoning.text","text":"hm"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","reasoning_details":[],"reasoning_details":[{"type":"reasoning.text","text":"hm"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","ANNOTATIONS":[{"type":"url_citation","url_citation":{"url":"https://a"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x","function_call":{"name":"old","arguments":"{}"}}}]}`,
	`[DONE]`,
}

// chatAround places chunk mid-stream: after text and a call's first piece,
// before more arguments, the finish and usage.
func chatAround(event string) string {
	var b strings.Builder
	for _, c := range []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
	} {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString(event)
	for _, c := range []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
		`[DONE]`,
	} {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

func TestPlainChunksHostile(t *testing.T) {
	for i, c := range hostileChunks {
		samePartsBothWays(t, "hostile "+c, chatAround("data: "+c+"\n\n"))
		// The same before the call starts: text still open.
		samePartsBothWays(t, "hostile first "+c, "data: "+c+"\n\n"+chatAround(""))
		if i == 0 {
			samePartsBothWays(t, "thread event", chatAround("event: thread.message\ndata: "+c+"\n\n"))
		}
	}
	// Reasoning open: the text that ends it goes through the hooks.
	reasoning := `data: {"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"hm","format":"unknown"}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":"answer"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":" more"},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"
	samePartsBothWays(t, "reasoning then text", reasoning)
}

func FuzzPlainChunk(f *testing.F) {
	for _, c := range hostileChunks {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, chunk string) {
		if strings.ContainsAny(chunk, "\r\n") {
			return // one event's data
		}
		samePartsBothWays(t, "fuzz "+chunk, chatAround("data: "+chunk+"\n\n"))
	})
}
