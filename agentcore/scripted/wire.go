package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Wire types: the chat-completions JSON as OpenAI writes it, field order
// and nulls included.
type (
	chunk struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   *usage   `json:"usage"`
	}
	choice struct {
		Index        int       `json:"index"`
		Delta        *delta    `json:"delta,omitempty"`
		Message      *message  `json:"message,omitempty"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	delta struct {
		Role      string          `json:"role,omitempty"`
		Content   *string         `json:"content,omitempty"`
		ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
	}
	toolCallDelta struct {
		Index    int           `json:"index"`
		ID       string        `json:"id,omitempty"`
		Type     string        `json:"type,omitempty"`
		Function functionDelta `json:"function"`
	}
	functionDelta struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	message struct {
		Role      string     `json:"role"`
		Content   *string    `json:"content"`
		ToolCalls []ToolCall `json:"tool_calls,omitempty"`
		Refusal   *string    `json:"refusal"`
	}
	usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// completion writes one scripted reply.
type completion struct {
	w       http.ResponseWriter
	ctx     <-chan struct{} // the request's context is done
	done    <-chan struct{} // the server is closed
	reply   Reply
	id      string
	model   string
	created int64
	usage   *usage
	err     error // first write error; later writes are skipped
}

// frame is one content or tool-call chunk; token is what OnChunk reports.
type frame struct {
	token string
	delta delta
}

// frames splits the reply into its chunks: text first, then each tool call
// as a header (id, name, empty arguments) followed by argument pieces.
func (r Reply) frames() []frame {
	var fs []frame
	toks, n := r.tokens(), max(r.ChunkSize, 1)
	for i := 0; i < len(toks); i += n {
		text := strings.Join(toks[i:min(i+n, len(toks))], "")
		fs = append(fs, frame{text, delta{Content: &text}})
	}
	for i, tc := range r.ToolCalls {
		fs = append(fs, frame{"", delta{ToolCalls: []toolCallDelta{{
			Index: i, ID: tc.ID, Type: "function", Function: functionDelta{Name: tc.Name}}}}})
		for _, piece := range r.argPieces(tc.Args) {
			fs = append(fs, frame{piece, delta{ToolCalls: []toolCallDelta{{
				Index: i, Function: functionDelta{Arguments: piece}}}}})
		}
	}
	if len(fs) == 0 { // OpenAI still sends the role with empty content
		empty := ""
		fs = append(fs, frame{"", delta{Content: &empty}})
	}
	fs[0].delta.Role = "assistant"
	return fs
}

// argPieces splits tool arguments into word-ish tokens, or into ChunkSize
// bytes cut on UTF-8 boundaries so every piece is valid JSON string text.
func (r Reply) argPieces(args string) []string {
	if r.ChunkSize <= 0 {
		return split(args)
	}
	var pieces []string
	for len(args) > 0 {
		n := min(r.ChunkSize, len(args))
		for n < len(args) && !utf8.RuneStart(args[n]) {
			n++
		}
		pieces = append(pieces, args[:n])
		args = args[n:]
	}
	return pieces
}

func (c *completion) stream() {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)

	r := c.reply
	fs := r.frames()
	for i := 0; ; i++ {
		if r.CutAfter > 0 && i == min(r.CutAfter, len(fs)) {
			c.cut()
			return
		}
		if r.StallAfter > 0 && i == min(r.StallAfter, len(fs)) {
			c.wait(-1)
			return
		}
		if i == len(fs) {
			break
		}
		if i > 0 && r.Delay > 0 && !c.wait(r.Delay) {
			return
		}
		c.data(c.chunk(choice{Delta: &fs[i].delta}))
		if c.flush() != nil {
			return
		}
		if r.OnChunk != nil {
			r.OnChunk(i, fs[i].token, time.Now())
		}
	}

	if r.Malformed {
		c.write(fmt.Sprintf("data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\n\n", c.id))
	} else {
		reason := r.finishReason()
		c.data(c.chunk(choice{Delta: &delta{}, FinishReason: &reason}))
	}
	usageChunk := c.chunk()
	usageChunk.Choices, usageChunk.Usage = []choice{}, c.usage
	c.data(usageChunk)
	c.write("data: [DONE]\n\n")
	c.flush()
}

// whole answers a request with "stream": false.
func (c *completion) whole() {
	r := c.reply
	switch {
	case r.CutAfter > 0:
		c.cut()
		return
	case r.StallAfter > 0:
		c.wait(-1)
		return
	}
	c.w.Header().Set("Content-Type", "application/json")
	if r.Malformed {
		c.write(fmt.Sprintf(`{"id":%q,"object":"chat.completion","choices":[{"index":0,"message":{"content":"`, c.id))
		return
	}
	text := strings.Join(r.tokens(), "")
	content := &text
	if text == "" && len(r.ToolCalls) > 0 {
		content = nil // as OpenAI sends a tool-only message
	}
	reason := r.finishReason()
	res := c.chunk(choice{
		Message:      &message{Role: "assistant", Content: content, ToolCalls: r.ToolCalls},
		FinishReason: &reason,
	})
	res.Object, res.Usage = "chat.completion", c.usage
	b, _ := json.Marshal(res)
	c.write(string(b))
	if r.OnChunk != nil && c.err == nil {
		r.OnChunk(0, text, time.Now())
	}
}

func (c *completion) chunk(choices ...choice) chunk {
	return chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, Choices: choices}
}

func (c *completion) data(v chunk) {
	b, _ := json.Marshal(v)
	c.write("data: " + string(b) + "\n\n")
}

func (c *completion) write(s string) {
	if c.err == nil {
		_, c.err = io.WriteString(c.w, s)
	}
}

func (c *completion) flush() error {
	if c.err == nil {
		c.err = http.NewResponseController(c.w).Flush()
	}
	return c.err
}

// wait pauses for d, or until the client goes away if d < 0. If the server
// closes meanwhile it cuts the connection, so that no client takes the
// shutdown for the end of the reply.
func (c *completion) wait(d time.Duration) bool {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-c.ctx:
	case <-c.done:
		c.cut()
	}
	return false
}

// cut drops the connection without ending the response, as a crashed
// upstream or a broken network would.
func (c *completion) cut() {
	conn, _, err := http.NewResponseController(c.w).Hijack()
	if err != nil { // HTTP/2 cannot hijack; this aborts the stream instead
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}
