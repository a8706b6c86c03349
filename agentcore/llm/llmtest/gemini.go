package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// GeminiServer stands in for the Gemini API where no recording exists
// (fantasy recorded no Google Search stream): it speaks the REST wire
// format of POST /v1beta/models/{model}:streamGenerateContent?alt=sse —
// an x-goog-api-key header, a JSON GenerateContentRequest, and an answer of
// server-sent events, one GenerateContentResponse per "data:" line, each
// ended by a blank line, written in small flushed pieces so that clients
// really stream and see lines split across reads. Errors come as Gemini's
// {"error":{"code","message","status"}} with the HTTP status.
type GeminiServer struct {
	*httptest.Server
	t        testing.TB
	mu       sync.Mutex
	replies  []GeminiReply
	requests []GeminiRequest
}

// GeminiReply is the answer to one request: Chunks streamed with status
// 200, or Status with an error Message.
type GeminiReply struct {
	Chunks  []GeminiChunk
	Status  int    // non-zero: answer this HTTP status with Message
	Message string // the error's message
}

// GeminiRequest is a request the server received.
type GeminiRequest struct {
	Model string
	Key   string
	Body  string
}

// Decode unmarshals the request body into v.
func (r GeminiRequest) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Body), v); err != nil {
		t.Fatalf("request body %s: %v", r.Body, err)
	}
}

// NewGeminiServer starts a server answering with the replies pushed to it,
// in order; it is closed when the test ends.
func NewGeminiServer(t testing.TB) *GeminiServer {
	s := &GeminiServer{t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Push queues replies.
func (s *GeminiServer) Push(r ...GeminiReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// Requests are the requests received so far.
func (s *GeminiServer) Requests() []GeminiRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]GeminiRequest(nil), s.requests...)
}

func (s *GeminiServer) serve(w http.ResponseWriter, r *http.Request) {
	model, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	model, stream := strings.CutSuffix(model, ":streamGenerateContent")
	if r.Method != http.MethodPost || !ok || !stream || r.URL.Query().Get("alt") != "sse" {
		s.t.Errorf("gemini: unexpected request %s %s", r.Method, r.URL)
		geminiError(w, http.StatusNotFound, "NOT_FOUND", "no such method: "+r.URL.Path)
		return
	}
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		geminiError(w, http.StatusForbidden, "PERMISSION_DENIED", "Method doesn't allow unregistered callers. Please use API Key.")
		return
	}
	body := readAll(r)
	s.mu.Lock()
	s.requests = append(s.requests, GeminiRequest{Model: model, Key: key, Body: body})
	var reply GeminiReply
	if len(s.replies) > 0 {
		reply, s.replies = s.replies[0], s.replies[1:]
	} else {
		reply = GeminiReply{Status: http.StatusInternalServerError, Message: "the test scripted no reply for this request"}
		s.t.Errorf("gemini: no reply scripted for request %d", len(s.requests))
	}
	s.mu.Unlock()
	if !json.Valid([]byte(body)) {
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received.")
		return
	}
	if reply.Status != 0 {
		geminiError(w, reply.Status, geminiStatus(reply.Status), reply.Message)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Content-Disposition", "attachment")
	w.WriteHeader(http.StatusOK)
	for _, c := range reply.Chunks {
		writeSlowly(w, "data: "+c.JSON(model)+"\r\n\r\n", 37)
	}
}

func geminiError(w http.ResponseWriter, code int, status, message string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write(b)
}

func geminiStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// GeminiChunk is one GenerateContentResponse of a stream. Its usage counts
// the answer so far, as Gemini's do (every chunk repeats the prompt's count
// and a growing candidates count).
type GeminiChunk struct {
	Parts     []map[string]any
	Finish    string         // finishReason, e.g. "STOP"
	Grounding map[string]any // groundingMetadata; see GeminiGrounding
	Usage     GeminiUsage
}

// GeminiUsage is a chunk's usageMetadata.
type GeminiUsage struct {
	Prompt, Candidates, Thoughts, ToolUsePrompt int
}

// Total is Gemini's totalTokenCount.
func (u GeminiUsage) Total() int { return u.Prompt + u.Candidates + u.Thoughts + u.ToolUsePrompt }

// JSON renders the chunk as Gemini sends it for model.
func (c GeminiChunk) JSON(model string) string {
	cand := map[string]any{"content": map[string]any{"parts": c.Parts, "role": "model"}, "index": 0}
	if c.Finish != "" {
		cand["finishReason"] = c.Finish
	}
	if c.Grounding != nil {
		cand["groundingMetadata"] = c.Grounding
	}
	usage := map[string]any{
		"promptTokenCount":     c.Usage.Prompt,
		"candidatesTokenCount": c.Usage.Candidates,
		"totalTokenCount":      c.Usage.Total(),
		"promptTokensDetails":  []any{map[string]any{"modality": "TEXT", "tokenCount": c.Usage.Prompt}},
	}
	if c.Usage.Thoughts > 0 {
		usage["thoughtsTokenCount"] = c.Usage.Thoughts
	}
	if c.Usage.ToolUsePrompt > 0 {
		usage["toolUsePromptTokenCount"] = c.Usage.ToolUsePrompt
	}
	b, err := json.Marshal(map[string]any{
		"candidates":    []any{cand},
		"usageMetadata": usage,
		"modelVersion":  model,
		"responseId":    "resp-" + model,
	})
	if err != nil {
		panic(fmt.Sprintf("gemini chunk: %v", err))
	}
	return string(b)
}

// GeminiText is a text part.
func GeminiText(s string) map[string]any { return map[string]any{"text": s} }

// GeminiFunctionCall is a functionCall part; sig, when set, is its
// thoughtSignature (bytes, base64 on the wire).
func GeminiFunctionCall(id, name string, args map[string]any, sig string) map[string]any {
	return signed(map[string]any{"functionCall": map[string]any{"id": id, "name": name, "args": args}}, sig)
}

// GeminiSearchCall is the toolCall part of a server-side Google Search, as
// Gemini 3 sends it with includeServerSideToolInvocations.
func GeminiSearchCall(id, sig string, queries ...string) map[string]any {
	return signed(map[string]any{"toolCall": map[string]any{
		"id": id, "toolType": "GOOGLE_SEARCH_WEB", "args": map[string]any{"queries": queries},
	}}, sig)
}

// GeminiSearchResponse is the toolResponse part answering GeminiSearchCall.
func GeminiSearchResponse(id, sig string) map[string]any {
	return signed(map[string]any{"toolResponse": map[string]any{
		"id": id, "toolType": "GOOGLE_SEARCH_WEB", "response": map[string]any{"search_suggestions": "<div class=\"container\">…</div>"},
	}}, sig)
}

func signed(part map[string]any, sig string) map[string]any {
	if sig != "" {
		part["thoughtSignature"] = base64.StdEncoding.EncodeToString([]byte(sig))
	}
	return part
}

// GeminiPage is a page Google Search found.
type GeminiPage struct{ URI, Title string }

// GeminiGrounding is the groundingMetadata of a grounded answer: the
// queries run, the pages found (Gemini's uri is a redirect, its title the
// site) and which text each page supports.
func GeminiGrounding(queries []string, pages ...GeminiPage) map[string]any {
	chunks := make([]any, len(pages))
	supports := make([]any, len(pages))
	for i, p := range pages {
		chunks[i] = map[string]any{"web": map[string]any{"uri": p.URI, "title": p.Title}}
		supports[i] = map[string]any{
			"segment":               map[string]any{"startIndex": 0, "endIndex": 10, "text": "supported"},
			"groundingChunkIndices": []int{i},
		}
	}
	return map[string]any{
		"searchEntryPoint":  map[string]any{"renderedContent": "<style>.container{}</style><div class=\"container\"></div>"},
		"groundingChunks":   chunks,
		"groundingSupports": supports,
		"webSearchQueries":  queries,
	}
}
