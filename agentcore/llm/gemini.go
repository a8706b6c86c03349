package llm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"charm.land/fantasy/providers/google"
)

// Gemini's own web search is Google Search grounding. fantasy v0.41.2's
// google adapter can neither ask for it nor read what it found, so Parley
// does both on the wire: geminiTransport, on the google provider's HTTP
// client, adds {"googleSearch":{}} to the request's tools and reads the
// streamed answer as it passes to Parley's reader (groundingMetadata, the
// server-side toolCall/toolResponse parts); the converter
// turns what it read into the provider-executed web_search call, result
// and sources that OpenAI and Anthropic models give.
//
// What Gemini allows (Gemini API docs: "Grounding with Google Search",
// "Combine built-in tools and function calling"):
//   - Gemini 2 models search only in a request without function tools;
//     with them the API answers 400, whatever else the request says.
//   - Gemini 3 and later search beside function tools once
//     toolConfig.includeServerSideToolInvocations is true. The answer then
//     carries the search as toolCall/toolResponse parts, which go back with
//     the model's turn in the requests that follow within the same turn.
//   - Gemma and Gemini 1 models have no Google Search.

// geminiSearch is what a Gemini model allows of Google Search.
type geminiSearch int

const (
	geminiNoSearch     geminiSearch = iota // Gemma, Gemini 1, other families
	geminiSearchAlone                      // Gemini 2: only without function tools
	geminiSearchBeside                     // Gemini 3 and later: beside function tools too
)

// geminiSearchOf classifies a model id by its generation. Ids without a
// version ("gemini-flash-latest") are aliases of current models and are
// taken as the newest generation: if an alias still points to an older
// model, Gemini's own 400 says so.
func geminiSearchOf(modelID string) geminiSearch {
	id := strings.ToLower(strings.TrimPrefix(modelID, "models/"))
	rest, ok := strings.CutPrefix(id, "gemini-")
	if !ok {
		return geminiNoSearch
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if digits == 0 {
		if rest == "pro" || rest == "pro-vision" { // Gemini 1.0's names
			return geminiNoSearch
		}
		return geminiSearchBeside
	}
	major, _ := strconv.Atoi(rest[:digits])
	switch {
	case major >= 3:
		return geminiSearchBeside
	case major == 2:
		return geminiSearchAlone
	}
	return geminiNoSearch
}

// geminiSearchError says why modelID cannot search in a request that
// also carries function tools (beside) or not; nil when it can.
func geminiSearchError(modelID string, beside bool) error {
	switch geminiSearchOf(modelID) {
	case geminiSearchBeside:
		return nil
	case geminiSearchAlone:
		if !beside {
			return nil
		}
		return &UnsupportedToolError{Tool: WebSearch, Provider: google.Name, Model: modelID,
			Reason: "Gemini 2 models cannot use Google Search together with function tools (Gemini 3 and later can)"}
	}
	return &UnsupportedToolError{Tool: WebSearch, Provider: google.Name, Model: modelID,
		Reason: "the model has no Google Search (Gemini 2 and later have it)"}
}

// geminiSearchTool is Google Search as the REST API names it (the genai
// SDK sends the camelCase field names).
var geminiSearchTool = json.RawMessage(`{"googleSearch":{}}`)

type geminiCallKey struct{}

// geminiCall is one HTTP attempt at a Gemini stream. Stream sets the
// request side; geminiTransport finds it in the request's context and
// fills in the rest as the answer streams in. The HTTP body is read on
// the attempt's reading goroutine and the converter runs on the
// consumer's, hence the lock.
type geminiCall struct {
	search bool // add Google Search to the request's tools
	beside bool // ... beside function tools: ask for the server-side tool parts
	// circulate maps a function call id to the server-side parts that go
	// back before it (see sealGeminiSignature).
	circulate map[string][]json.RawMessage

	mu       sync.Mutex
	searched bool // a search was seen: a toolCall part or grounding metadata
	queries  []string
	sources  []Source
	pending  []json.RawMessage   // server-side parts not yet followed by a function call
	bound    [][]json.RawMessage // the server-side parts before each function call, in call order
}

// newGeminiCall prepares an attempt at req; toCall has already refused a
// search the model does not allow.
func newGeminiCall(req Request) *geminiCall {
	g := &geminiCall{}
	functions := false
	for _, t := range req.Tools {
		if t.ProviderDefined {
			g.search = g.search || t.Name == WebSearch
		} else {
			functions = true
		}
	}
	g.beside = g.search && functions
	if g.beside {
		g.circulate = geminiCirculation(req.Messages)
	}
	return g
}

// geminiCirculation collects the server-side parts to send back: those of
// the current turn only (after the last user message), as earlier turns
// stand on their text like every other provider's.
func geminiCirculation(msgs []Message) map[string][]json.RawMessage {
	start := 0
	for i, m := range msgs {
		if m.Role == RoleUser {
			start = i + 1
		}
	}
	var out map[string][]json.RawMessage
	for _, m := range msgs[start:] {
		for _, tc := range m.ToolCalls {
			if _, parts := openGeminiSignature(tc.Signature); len(parts) > 0 {
				if out == nil {
					out = map[string][]json.RawMessage{}
				}
				out[tc.ID] = parts
			}
		}
	}
	return out
}

// geminiEnvelope starts every Signature of a Gemini function call: JSON
// holding Gemini's thought signature (binary, so base64 here: the raw
// bytes would not survive a stored JSON message) and the server-side parts
// (a search's toolCall and toolResponse) that came before the call in the
// model's answer. Gemini wants those back in that place; a function call is
// the one piece of a step that travels back to the next request, so they
// ride on its Signature.
const geminiEnvelope = "gemini-parts:"

func sealGeminiSignature(sig string, parts []json.RawMessage) string {
	b, _ := json.Marshal(struct { // raw JSON from the wire and bytes: cannot fail
		Signature []byte            `json:"signature,omitempty"`
		Parts     []json.RawMessage `json:"parts,omitempty"`
	}{[]byte(sig), parts})
	return geminiEnvelope + string(b)
}

// openGeminiSignature splits a Signature into the thought signature and
// the server-side parts it carries; a plain signature has none.
func openGeminiSignature(s string) (sig string, parts []json.RawMessage) {
	rest, ok := strings.CutPrefix(s, geminiEnvelope)
	if !ok {
		return s, nil
	}
	var env struct {
		Signature []byte            `json:"signature"`
		Parts     []json.RawMessage `json:"parts"`
	}
	if json.Unmarshal([]byte(rest), &env) != nil {
		return "", nil // not ours after all: better no signature than a wrong one
	}
	return string(env.Signature), env.Parts
}

// geminiClient returns c with geminiTransport in front of its transport.
func geminiClient(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.Transport = geminiTransport{next: cmp.Or[http.RoundTripper](out.Transport, http.DefaultTransport)}
	return &out
}

// geminiTransport rewrites and reads the requests of a geminiCall; any
// other request passes untouched.
type geminiTransport struct{ next http.RoundTripper }

func (t geminiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g, _ := req.Context().Value(geminiCallKey{}).(*geminiCall)
	if g == nil || req.Body == nil {
		return t.next.RoundTrip(req)
	}
	if g.search || len(g.circulate) > 0 {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the Gemini request: %w", err)
		}
		if body, err = g.rewrite(body); err != nil {
			return nil, fmt.Errorf("add Google Search to the Gemini request: %w", err)
		}
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err // errors are the adapter's to read
	}
	resp.Body = &geminiTee{body: resp.Body, call: g}
	return resp, nil
}

// rewrite adds Google Search to a generateContent request body, with the
// server-side tool invocations when it sits beside function tools, and
// puts the circulated parts back before their function calls.
func (g *geminiCall) rewrite(body []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	if g.search {
		var tools []json.RawMessage
		if err := unmarshalIf(top["tools"], &tools); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		top["tools"], _ = json.Marshal(append(tools, geminiSearchTool))
	}
	if g.beside {
		config := map[string]json.RawMessage{}
		if err := unmarshalIf(top["toolConfig"], &config); err != nil {
			return nil, fmt.Errorf("toolConfig: %w", err)
		}
		config["includeServerSideToolInvocations"] = json.RawMessage("true")
		top["toolConfig"], _ = json.Marshal(config)
		if len(g.circulate) > 0 {
			contents, err := g.insertCirculated(top["contents"])
			if err != nil {
				return nil, fmt.Errorf("contents: %w", err)
			}
			top["contents"] = contents
		}
	}
	return json.Marshal(top)
}

func (g *geminiCall) insertCirculated(raw json.RawMessage) (json.RawMessage, error) {
	var contents []map[string]json.RawMessage
	if err := unmarshalIf(raw, &contents); err != nil {
		return nil, err
	}
	for _, c := range contents {
		var parts []json.RawMessage
		if err := unmarshalIf(c["parts"], &parts); err != nil {
			return nil, err
		}
		var out []json.RawMessage
		for _, p := range parts {
			var probe struct {
				FunctionCall *struct {
					ID string `json:"id"`
				} `json:"functionCall"`
			}
			if json.Unmarshal(p, &probe) == nil && probe.FunctionCall != nil {
				out = append(out, g.circulate[probe.FunctionCall.ID]...)
			}
			out = append(out, p)
		}
		if len(out) != len(parts) {
			c["parts"], _ = json.Marshal(out)
		}
	}
	return json.Marshal(contents)
}

func unmarshalIf(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// geminiMaxLine bounds the line the tee keeps while it waits for its end;
// a longer one is passed on unread (Parley's reader, sdkgemini.go, decides
// on it).
const geminiMaxLine = 8 << 20

// geminiTee reads the server-sent events of a streamGenerateContent answer
// as they pass to Parley's reader, one "data:" line at a time.
type geminiTee struct {
	body     io.ReadCloser
	call     *geminiCall
	line     []byte
	overlong bool
}

func (t *geminiTee) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	t.scan(p[:n])
	return n, err
}

func (t *geminiTee) Close() error { return t.body.Close() }

func (t *geminiTee) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.keep(b)
			return
		}
		t.keep(b[:i])
		b = b[i+1:]
		if !t.overlong {
			line := bytes.TrimSuffix(t.line, []byte("\r"))
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				t.call.read(data)
			}
		}
		t.line, t.overlong = t.line[:0], false
	}
}

func (t *geminiTee) keep(b []byte) {
	if t.overlong || len(t.line)+len(b) > geminiMaxLine {
		t.line, t.overlong = t.line[:0], true
		return
	}
	t.line = append(t.line, b...)
}

// geminiChunk is what the tee reads of one GenerateContentResponse.
type geminiChunk struct {
	Candidates []struct {
		Content *struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"content"`
		GroundingMetadata *struct {
			WebSearchQueries []string `json:"webSearchQueries"`
			GroundingChunks  []struct {
				Web *struct {
					URI   string `json:"uri"`
					Title string `json:"title"`
				} `json:"web"`
			} `json:"groundingChunks"`
		} `json:"groundingMetadata"`
	} `json:"candidates"`
}

// geminiPart is what the tee reads of one part.
type geminiPart struct {
	FunctionCall json.RawMessage `json:"functionCall"`
	ToolCall     *struct {
		ToolType string `json:"toolType"`
		Args     struct {
			Queries []string `json:"queries"`
			Query   string   `json:"query"`
		} `json:"args"`
	} `json:"toolCall"`
	ToolResponse json.RawMessage `json:"toolResponse"`
}

// read takes in one chunk of the answer. A chunk it cannot parse is left
// to Parley's reader, which fails the stream over it.
func (g *geminiCall) read(data []byte) {
	var chunk geminiChunk
	if json.Unmarshal(data, &chunk) != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(chunk.Candidates) == 0 { // the adapter reads the first candidate only, so do we
		return
	}
	cand := chunk.Candidates[0]
	if cand.Content != nil {
		for _, raw := range cand.Content.Parts {
			var p geminiPart
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			switch {
			case p.ToolCall != nil:
				g.pending = append(g.pending, raw)
				if p.ToolCall.ToolType == "GOOGLE_SEARCH_WEB" {
					g.searched = true
					g.addQueries(append(p.ToolCall.Args.Queries, p.ToolCall.Args.Query))
				}
			case p.ToolResponse != nil:
				g.pending = append(g.pending, raw)
			case p.FunctionCall != nil:
				g.bound = append(g.bound, g.pending)
				g.pending = nil
			}
		}
	}
	if gm := cand.GroundingMetadata; gm != nil {
		g.addQueries(gm.WebSearchQueries)
		for _, c := range gm.GroundingChunks {
			if c.Web != nil && c.Web.URI != "" && !slices.ContainsFunc(g.sources, func(s Source) bool { return s.URL == c.Web.URI }) {
				g.sources = append(g.sources, Source{URL: c.Web.URI, Title: c.Web.Title})
			}
		}
		if len(gm.WebSearchQueries) > 0 || len(g.sources) > 0 {
			g.searched = true
		}
	}
}

func (g *geminiCall) addQueries(qs []string) {
	for _, q := range qs {
		if q = strings.TrimSpace(q); q != "" && !slices.Contains(g.queries, q) {
			g.queries = append(g.queries, q)
		}
	}
}

// geminiSeen is a copy of what the tee has read so far.
type geminiSeen struct {
	searched bool
	queries  []string
	sources  []Source
}

func (g *geminiCall) seen() geminiSeen {
	g.mu.Lock()
	defer g.mu.Unlock()
	return geminiSeen{g.searched, slices.Clone(g.queries), slices.Clone(g.sources)}
}

// boundTo returns the server-side parts that came before the n-th (from 0)
// function call of the answer.
func (g *geminiCall) boundTo(n int) []json.RawMessage {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n < len(g.bound) {
		return g.bound[n]
	}
	return nil
}

// geminiSearchQuery is the query a search call shows: Gemini may run
// several for one answer.
func geminiSearchQuery(queries []string) string { return strings.Join(queries, "; ") }

// newSearchID names a Gemini search call. Gemini's own toolCall ids (when
// it sends any) are only unique within one answer, and a message holds the
// calls of every step.
func newSearchID() string { return "gs_" + rand.Text() }

// withGeminiCall puts g where geminiTransport looks for it.
func withGeminiCall(ctx context.Context, g *geminiCall) context.Context {
	return context.WithValue(ctx, geminiCallKey{}, g)
}
