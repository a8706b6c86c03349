package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"parley/agentcore/llm/llmtest"
)

// Google Search on Gemini, against a stand-in speaking the Gemini REST wire
// format (no recording of a Gemini search exists: fantasy made none).

func openGemini(t *testing.T, srv *llmtest.GeminiServer, modelID string) Model {
	t.Helper()
	m, err := Open("google/"+modelID, Config{
		APIKeys:    map[string]string{"google": "test-key"},
		BaseURLs:   map[string]string{"google": srv.URL},
		Getenv:     func(string) string { return "" },
		MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	tokyoPages = []llmtest.GeminiPage{
		{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQ-metro", Title: "metro.tokyo.lg.jp"},
		{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQ-wiki", Title: "wikipedia.org"},
	}
	tokyoSources = []Source{{URL: tokyoPages[0].URI, Title: tokyoPages[0].Title}, {URL: tokyoPages[1].URI, Title: tokyoPages[1].Title}}
)

// geminiRequest is the part of a GenerateContentRequest the tests look at.
type geminiRequest struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools      []map[string]json.RawMessage `json:"tools"`
	ToolConfig map[string]json.RawMessage   `json:"toolConfig"`
}

func (r geminiRequest) hasTool(kind string) bool {
	return slices.ContainsFunc(r.Tools, func(t map[string]json.RawMessage) bool { _, ok := t[kind]; return ok })
}

// Gemini 2 searches in a request without function tools; the grounding
// comes with the last chunk, after the text.
func TestGeminiSearchAlone(t *testing.T) {
	srv := llmtest.NewGeminiServer(t)
	empty := map[string]any{}
	last := llmtest.GeminiUsage{Prompt: 17, Candidates: 41, Thoughts: 319, ToolUsePrompt: 104}
	srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiText("Tokyo has about ")}, Grounding: empty, Usage: llmtest.GeminiUsage{Prompt: 17, Candidates: 9, Thoughts: 319, ToolUsePrompt: 104}},
		{Parts: []map[string]any{llmtest.GeminiText("14 million people.")}, Grounding: empty, Usage: llmtest.GeminiUsage{Prompt: 17, Candidates: 30, Thoughts: 319, ToolUsePrompt: 104}},
		{Parts: []map[string]any{llmtest.GeminiText(" (2025 estimate)")}, Finish: "STOP", Usage: last,
			Grounding: llmtest.GeminiGrounding([]string{"Tokyo population 2025", "Tokyo population"}, append(tokyoPages, tokyoPages[0])...)},
	}})
	m := openGemini(t, srv, "gemini-2.5-flash")
	if err := CheckProviderTool(m.Spec(), WebSearch); err == nil {
		t.Error("CheckProviderTool: Gemini 2 cannot search beside function tools, want an error")
	}
	parts, err := collect(t, m, Request{
		Messages:   []Message{{Role: RoleSystem, Text: "Be brief."}, {Role: RoleUser, Text: "How many people live in Tokyo?"}},
		Tools:      []ToolSpec{{Name: WebSearch, ProviderDefined: true}},
		ToolChoice: "auto",
	})
	if err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gemini-2.5-flash" || reqs[0].Key != "test-key" {
		t.Fatalf("requests %+v", reqs)
	}
	var body geminiRequest
	reqs[0].Decode(t, &body)
	if len(body.Tools) != 1 || string(body.Tools[0]["googleSearch"]) != "{}" || body.ToolConfig != nil {
		t.Errorf("want Google Search alone and no tool config, got %s", reqs[0].Body)
	}
	if len(body.Contents) != 1 || !strings.Contains(string(body.Contents[0].Parts[0]), "Tokyo") {
		t.Errorf("contents %s", reqs[0].Body)
	}

	if text := joined(ofType(parts, PartTextDelta)); text != "Tokyo has about 14 million people. (2025 estimate)" {
		t.Errorf("text %q", text)
	}
	checkGeminiSearch(t, parts, "Tokyo population 2025; Tokyo population", tokyoSources)
	checkFinish(t, parts, "stop")
	f := parts[len(parts)-1]
	want := Usage{InputTokens: 17, OutputTokens: 41 + 319, TotalTokens: int64(last.Total()), ReasoningTokens: 319} // thoughts are output
	if f.Usage != want {
		t.Errorf("usage %+v, want the last chunk's %+v", f.Usage, want)
	}
}

// checkGeminiSearch asserts one provider-executed web_search call with the
// query, its result naming the pages, and a source part per page, in that
// order.
func checkGeminiSearch(t *testing.T, parts []Part, query string, pages []Source) {
	t.Helper()
	starts, calls, results := ofType(parts, PartToolInputStart), ofType(parts, PartToolCall), ofType(parts, PartToolResult)
	starts = slices.DeleteFunc(starts, func(p Part) bool { return !p.ProviderExecuted })
	calls = slices.DeleteFunc(calls, func(p Part) bool { return !p.ProviderExecuted })
	if len(starts) != 1 || len(calls) != 1 || len(results) != 1 {
		t.Fatalf("want one search start, call and result, got %d/%d/%d: %+v", len(starts), len(calls), len(results), parts)
	}
	call, result := calls[0], results[0]
	id := call.ToolCallID
	if !strings.HasPrefix(id, "gs_") || starts[0].ToolCallID != id || result.ToolCallID != id {
		t.Errorf("ids: start %q, call %q, result %q", starts[0].ToolCallID, id, result.ToolCallID)
	}
	if call.ToolName != WebSearch || result.ToolName != WebSearch || !result.ProviderExecuted || result.IsError {
		t.Errorf("call %+v, result %+v", call, result)
	}
	var in struct{ Query string }
	if err := json.Unmarshal([]byte(call.Input), &in); err != nil || !strings.HasPrefix(query, in.Query) || in.Query == "" {
		t.Errorf("call input %s (%v), want a query starting %q", call.Input, err, query)
	}
	var res WebSearchResult
	if err := json.Unmarshal([]byte(result.Result), &res); err != nil {
		t.Fatalf("result %s: %v", result.Result, err)
	}
	if res.Query != query || !slices.Equal(res.Results, pages) || res.Error != "" {
		t.Errorf("result %+v, want query %q and pages %+v", res, query, pages)
	}
	var sources []Source
	for _, p := range ofType(parts, PartSource) {
		sources = append(sources, Source{URL: p.URL, Title: p.Title})
	}
	if !slices.Equal(sources, pages) {
		t.Errorf("sources %+v, want %+v once each", sources, pages)
	}
	at := func(match func(Part) bool) int { return slices.IndexFunc(parts, match) }
	callAt := at(func(p Part) bool { return p.Type == PartToolCall && p.ProviderExecuted })
	resultAt := at(func(p Part) bool { return p.Type == PartToolResult })
	sourceAt := at(func(p Part) bool { return p.Type == PartSource })
	finishAt := at(func(p Part) bool { return p.Type == PartFinish })
	if !(callAt < resultAt && resultAt < sourceAt && sourceAt < finishAt) {
		t.Errorf("call at %d, result at %d, first source at %d, finish at %d: want that order", callAt, resultAt, sourceAt, finishAt)
	}
}

// Gemini 3 searches beside function tools: the request asks for the
// server-side tool parts, the search shows before the text, and its
// toolCall/toolResponse parts go back with the function call in the next
// request of the turn, in their place and with their signatures.
func TestGeminiSearchBesideFunctionTools(t *testing.T) {
	srv := llmtest.NewGeminiServer(t)
	srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiSearchCall("s1", "sig-search", "northernmost city in the United States")}, Usage: llmtest.GeminiUsage{Prompt: 60, Thoughts: 80}},
		{Parts: []map[string]any{llmtest.GeminiSearchResponse("s1", "")}, Usage: llmtest.GeminiUsage{Prompt: 60, Thoughts: 80, ToolUsePrompt: 200}},
		{Parts: []map[string]any{llmtest.GeminiText("It is Utqiaġvik, Alaska. Checking its weather.")}, Usage: llmtest.GeminiUsage{Prompt: 60, Candidates: 12, Thoughts: 80, ToolUsePrompt: 200}},
		{Parts: []map[string]any{llmtest.GeminiFunctionCall("fc1", "weather", map[string]any{"location": "Utqiaġvik, Alaska"}, "sig-call")},
			Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 60, Candidates: 20, Thoughts: 80, ToolUsePrompt: 200},
			Grounding: llmtest.GeminiGrounding([]string{"northernmost city in the United States"}, tokyoPages[1])},
	}}, llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiText("It is -20 C there.")}, Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 300, Candidates: 8}},
	}})
	m := openGemini(t, srv, "gemini-3-flash-preview")
	if err := CheckProviderTool(m.Spec(), WebSearch); err != nil {
		t.Errorf("CheckProviderTool: %v", err)
	}
	req := Request{
		Messages:   []Message{{Role: RoleUser, Text: "What is the northernmost city in the United States? What's the weather like there today?"}},
		Tools:      []ToolSpec{weatherTool, {Name: WebSearch, ProviderDefined: true}},
		ToolChoice: "auto",
	}
	parts, err := collect(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	var body geminiRequest
	srv.Requests()[0].Decode(t, &body)
	if !body.hasTool("googleSearch") || !body.hasTool("functionDeclarations") || !strings.Contains(string(body.Tools[0]["functionDeclarations"]), `"weather"`) {
		t.Errorf("want the weather function and Google Search, got tools %s", srv.Requests()[0].Body)
	}
	if string(body.ToolConfig["includeServerSideToolInvocations"]) != "true" || !strings.Contains(string(body.ToolConfig["functionCallingConfig"]), "AUTO") {
		t.Errorf("tool config %s: want the server-side tool invocations and the caller's AUTO", srv.Requests()[0].Body)
	}

	checkGeminiSearch(t, parts, "northernmost city in the United States", []Source{{URL: tokyoPages[1].URI, Title: tokyoPages[1].Title}})
	searchAt := slices.IndexFunc(parts, func(p Part) bool { return p.Type == PartToolCall && p.ProviderExecuted })
	textAt := slices.IndexFunc(parts, func(p Part) bool { return p.Type == PartTextDelta })
	if searchAt > textAt {
		t.Errorf("the search (at %d) shows after the text (at %d), though Gemini sent it first", searchAt, textAt)
	}
	calls := slices.DeleteFunc(ofType(parts, PartToolCall), func(p Part) bool { return p.ProviderExecuted })
	if len(calls) != 1 || calls[0].ToolName != "weather" || calls[0].ToolCallID != "fc1" || !strings.Contains(calls[0].Input, "Utqia") {
		t.Fatalf("function calls %+v", calls)
	}
	checkFinish(t, parts, "tool-calls")
	if u := parts[len(parts)-1].Usage; u.InputTokens != 60 || u.OutputTokens != 20+80 || u.TotalTokens != 360 || u.ReasoningTokens != 80 {
		t.Errorf("usage %+v, want the last chunk's", u)
	}

	// The next request of the turn: the search goes back before the call.
	call := calls[0]
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Text: joined(ofType(parts, PartTextDelta)), ToolCalls: []ToolCall{
			{ID: "gs_x", Name: WebSearch, Input: `{"query":"q"}`, ProviderExecuted: true},
			{ID: call.ToolCallID, Name: call.ToolName, Input: call.Input, Signature: call.Signature},
		}},
		Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: call.ToolCallID, Name: call.ToolName, Output: "-20 C"}}},
	)
	if parts, err = collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	if joined(ofType(parts, PartTextDelta)) != "It is -20 C there." {
		t.Errorf("answer %+v", parts)
	}
	if len(ofType(parts, PartToolCall)) != 0 {
		t.Errorf("a search announced for an answer that had none: %+v", parts)
	}
	body = geminiRequest{}
	srv.Requests()[1].Decode(t, &body)
	if !body.hasTool("googleSearch") || string(body.ToolConfig["includeServerSideToolInvocations"]) != "true" {
		t.Errorf("second request lost Google Search: %s", srv.Requests()[1].Body)
	}
	if len(body.Contents) != 3 || body.Contents[1].Role != "model" {
		t.Fatalf("contents %s", srv.Requests()[1].Body)
	}
	model := body.Contents[1].Parts
	var kinds []string
	for _, p := range model {
		var part map[string]json.RawMessage
		json.Unmarshal(p, &part)
		kind := ""
		for _, k := range []string{"text", "toolCall", "toolResponse", "functionCall"} {
			if part[k] != nil {
				kind = k
			}
		}
		if sig := part["thoughtSignature"]; sig != nil {
			var b []byte
			json.Unmarshal(sig, &b)
			kind += "+" + string(b)
		}
		kinds = append(kinds, kind)
	}
	want := []string{"text", "toolCall+sig-search", "toolResponse", "functionCall+sig-call"}
	if !slices.Equal(kinds, want) {
		t.Errorf("model turn sent back as %v, want %v:\n%s", kinds, want, srv.Requests()[1].Body)
	}
	if !strings.Contains(string(model[1]), `"id":"s1"`) || !strings.Contains(string(model[1]), "northernmost") {
		t.Errorf("the search's toolCall part changed on its way back: %s", model[1])
	}
}

// A function call's Signature carries the server-side parts through
// storage as text; a plain signature stays as it is.
func TestGeminiSignatureEnvelope(t *testing.T) {
	parts := []json.RawMessage{json.RawMessage(`{"toolCall":{"id":"s1"},"thoughtSignature":"AAE="}`)}
	sealed := sealGeminiSignature("\x00\xffraw", parts)
	var asText string
	if err := json.Unmarshal(must(json.Marshal(sealed)), &asText); err != nil || asText != sealed {
		t.Fatalf("sealed signature does not survive JSON: %q, %v", asText, err)
	}
	sig, got := openGeminiSignature(sealed)
	if sig != "\x00\xffraw" || len(got) != 1 || string(got[0]) != string(parts[0]) {
		t.Errorf("opened %q, %s", sig, got)
	}
	if sig, got := openGeminiSignature("plain"); sig != "plain" || got != nil {
		t.Errorf("plain signature opened as %q, %s", sig, got)
	}
	if sig, got := openGeminiSignature(geminiEnvelope + "{broken"); sig != "" || got != nil {
		t.Errorf("broken envelope opened as %q, %s", sig, got)
	}
	// Only the current turn's parts go back.
	msgs := []Message{
		{Role: RoleUser, Text: "a"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "old", Signature: sealed}}},
		{Role: RoleUser, Text: "b"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "new", Signature: sealed}, {ID: "plain", Signature: "x"}}},
	}
	if c := geminiCirculation(msgs); len(c) != 1 || c["new"] == nil {
		t.Errorf("circulation %v, want the current turn's call only", c)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// What each generation allows, refused before any request with the
// reason.
func TestGeminiSearchRefused(t *testing.T) {
	cases := []struct {
		model     string
		functions bool
		want      string // "" when the request goes out
	}{
		{"gemini-2.5-flash", true, "web_search is not available for google/gemini-2.5-flash: Gemini 2 models cannot use Google Search together with function tools (Gemini 3 and later can)"},
		{"gemini-2.5-flash", false, ""},
		{"gemini-3-flash-preview", true, ""},
		{"gemini-3.1-pro-preview", true, ""},
		{"gemini-flash-latest", true, ""},
		{"gemma-3-27b-it", false, "web_search is not available for google/gemma-3-27b-it: the model has no Google Search (Gemini 2 and later have it)"},
		{"gemini-1.5-pro", false, "web_search is not available for google/gemini-1.5-pro: the model has no Google Search (Gemini 2 and later have it)"},
		{"gemini-pro", false, "web_search is not available for google/gemini-pro: the model has no Google Search (Gemini 2 and later have it)"},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			srv := llmtest.NewGeminiServer(t)
			if tc.want == "" {
				srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{{Parts: []map[string]any{llmtest.GeminiText("ok")}, Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 3, Candidates: 1}}}})
			}
			tools := []ToolSpec{{Name: WebSearch, ProviderDefined: true}}
			if tc.functions {
				tools = append(tools, weatherTool)
			}
			_, err := collect(t, openGemini(t, srv, tc.model), Request{Messages: []Message{{Role: RoleUser, Text: "news?"}}, Tools: tools})
			var unsupported *UnsupportedToolError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.As(err, &unsupported)):
				t.Errorf("got %v, want %q", err, tc.want)
			case tc.want != "" && len(srv.Requests()) > 0:
				t.Errorf("a refused search still sent %d requests", len(srv.Requests()))
			}
			if check := CheckProviderTool("google/"+tc.model, WebSearch); (check == nil) != (tc.want == "" && tc.functions) {
				t.Errorf("CheckProviderTool: %v", check)
			}
		})
	}
}

// Gemini's own refusal comes through with its words.
func TestGeminiErrorAnswer(t *testing.T) {
	srv := llmtest.NewGeminiServer(t)
	msg := "Tool call context circulation is not enabled for models/gemini-flash-lite-latest"
	srv.Push(llmtest.GeminiReply{Status: 400, Message: msg})
	parts, err := collect(t, openGemini(t, srv, "gemini-flash-lite-latest"), Request{
		Messages: []Message{{Role: RoleUser, Text: "news?"}},
		Tools:    []ToolSpec{weatherTool, {Name: WebSearch, ProviderDefined: true}},
	})
	if want := "google: 400 Bad Request: " + msg; len(parts) != 0 || err == nil || err.Error() != want {
		t.Errorf("got %+v, %v; want the error %q", parts, err, want)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: a 400 is not retried", n)
	}
}

// Gemini counts tokens as running totals per chunk: the last count is the
// usage, on a real recording too (fantasy alone adds the totals up).
func TestGeminiUsageOfRecording(t *testing.T) {
	m, c, _ := openReplay(t, "TestGoogleCommon/gemini-2.5-pro/simple_streaming.yaml", "google/gemini-2.5-pro", "")
	parts, err := collect(t, m, Request{
		Messages:        []Message{{Role: RoleSystem, Text: "You are a helpful assistant"}, {Role: RoleUser, Text: "Say hi in Portuguese"}},
		MaxOutputTokens: 4000,
	})
	if err != nil {
		t.Fatal(err)
	}
	body := c.Interactions[0].Response.Body
	i := strings.LastIndex(body, "data:")
	var last struct {
		UsageMetadata struct{ PromptTokenCount, CandidatesTokenCount, TotalTokenCount, ThoughtsTokenCount int64 }
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body[i+len("data:"):])), &last); err != nil {
		t.Fatal(err)
	}
	u, want := parts[len(parts)-1].Usage, last.UsageMetadata
	if u.InputTokens != want.PromptTokenCount || u.OutputTokens != want.CandidatesTokenCount+want.ThoughtsTokenCount || u.TotalTokens != want.TotalTokenCount || u.ReasoningTokens != want.ThoughtsTokenCount {
		t.Errorf("usage %+v, want the last chunk's %+v", u, want)
	}
}

func TestGeminiSearchOf(t *testing.T) {
	for id, want := range map[string]geminiSearch{
		"gemini-3-flash-preview": geminiSearchBeside, "gemini-3.1-pro-preview": geminiSearchBeside,
		"models/gemini-3-pro": geminiSearchBeside, "gemini-10-ultra": geminiSearchBeside,
		"gemini-flash-latest": geminiSearchBeside, "gemini-pro-latest": geminiSearchBeside,
		"gemini-2.5-flash": geminiSearchAlone, "gemini-2.0-flash": geminiSearchAlone, "Gemini-2.5-Pro": geminiSearchAlone,
		"gemini-1.5-pro": geminiNoSearch, "gemini-pro": geminiNoSearch, "gemini-pro-vision": geminiNoSearch,
		"gemma-3-27b-it": geminiNoSearch, "learnlm-2.0-flash": geminiNoSearch,
	} {
		if got := geminiSearchOf(id); got != want {
			t.Errorf("geminiSearchOf(%q) = %d, want %d", id, got, want)
		}
	}
}

// The tee reads the same chunks however the body is cut into reads, and
// passes every byte on unchanged.
func FuzzGeminiTee(f *testing.F) {
	stream := "data: " + llmtest.GeminiChunk{Parts: []map[string]any{llmtest.GeminiSearchCall("s1", "sig", "q")}, Usage: llmtest.GeminiUsage{Prompt: 1}}.JSON("m") + "\r\n\r\n" +
		"data: " + llmtest.GeminiChunk{Parts: []map[string]any{llmtest.GeminiFunctionCall("f", "w", nil, "")}, Finish: "STOP",
		Grounding: llmtest.GeminiGrounding([]string{"q2"}, tokyoPages...), Usage: llmtest.GeminiUsage{Prompt: 1, Candidates: 2}}.JSON("m") + "\r\n\r\n"
	f.Add([]byte(stream), uint8(7))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"toolCall\":{}}]}}]}\n\ndata: {broken\n"), uint8(1))
	f.Add([]byte("data:"+strings.Repeat("x", 100)+"\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		whole := &geminiCall{}
		(&geminiTee{body: io.NopCloser(bytes.NewReader(data)), call: whole}).scan(data)
		split := &geminiCall{}
		tee := &geminiTee{body: io.NopCloser(&chopped{data: data, n: int(step)%13 + 1}), call: split}
		out, err := io.ReadAll(tee)
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("tee changed the body: %q, %v", out, err)
		}
		a, b := whole.seen(), split.seen()
		if a.searched != b.searched || !slices.Equal(a.queries, b.queries) || !slices.Equal(a.sources, b.sources) || len(whole.bound) != len(split.bound) {
			t.Fatalf("read whole %+v, in pieces %+v", a, b)
		}
	})
}

// chopped reads at most n bytes at a time.
type chopped struct {
	data []byte
	n    int
}

func (c *chopped) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}
