package agentcore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/agentcore/llm/llmtest"
	"parley/storage"
)

// web_search on a Gemini 3 model through a whole run over a real store:
// Google Search shows and is stored as a provider-executed call with its
// result and sources, like OpenAI's and Anthropic's searches; the function
// tool beside it runs; and the second model call of the run asks for
// Google Search again and gets the search's parts back before the call.
func TestRuntimeGeminiWebSearch(t *testing.T) {
	srv := llmtest.NewGeminiServer(t)
	page := llmtest.GeminiPage{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQ-utqiagvik", Title: "wikipedia.org"}
	srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiSearchCall("s1", "sig-search", "northernmost city in the United States")}, Usage: llmtest.GeminiUsage{Prompt: 60}},
		{Parts: []map[string]any{llmtest.GeminiSearchResponse("s1", ""), llmtest.GeminiText("It is Utqiaġvik, Alaska.")}, Usage: llmtest.GeminiUsage{Prompt: 60, Candidates: 7, ToolUsePrompt: 200}},
		{Parts: []map[string]any{llmtest.GeminiFunctionCall("fc1", "weather", map[string]any{"city": "Utqiaġvik"}, "sig-call")}, Finish: "STOP",
			Usage: llmtest.GeminiUsage{Prompt: 60, Candidates: 15, ToolUsePrompt: 200}, Grounding: llmtest.GeminiGrounding([]string{"northernmost city in the United States"}, page)},
	}}, llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiText("It is -20 C there.")}, Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 320, Candidates: 8}},
	}})

	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{
		APIKeys:  map[string]string{"google": "k"},
		BaseURLs: map[string]string{"google": srv.URL},
		Getenv:   func(string) string { return "" }, MaxRetries: -1,
	}
	weather := agentcore.NewTool("weather", "Current weather of a city",
		func(ctx context.Context, in weatherIn, tc *agentcore.ToolContext) (string, error) {
			return "-20 C in " + in.City, nil
		})
	agent := &agentcore.Agent{
		ID: "a", Name: "A", Model: "google/gemini-3-flash-preview",
		Tools:  map[string]*agentcore.Tool{"weather": weather, "web_search": {ID: llm.WebSearch, ProviderDefined: true}},
		Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) },
	}
	rt := agentcore.NewRuntime(db, nil, agent)
	t.Cleanup(func() { rt.Close(); db.Close() })
	th := thread(t, rt)
	sub := rt.Subscribe(th.ID)
	defer sub.Close()
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "What is the northernmost US city, and its weather?"}); err != nil {
		t.Fatal(err)
	}
	events := collect(t, sub)
	if last := events[len(events)-1]; last.Type != agentcore.EventFinish {
		t.Fatalf("run ended with %+v", last)
	}

	msgs, err := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("stored %d messages, %v", len(msgs), err)
	}
	var search, call *agentcore.ToolInvocation
	var sources []agentcore.Source
	for _, p := range msgs[1].Content.Parts {
		switch {
		case p.Type == "tool-invocation" && p.ToolInvocation.ToolName == llm.WebSearch:
			search = p.ToolInvocation
		case p.Type == "tool-invocation":
			call = p.ToolInvocation
		case p.Type == "source":
			sources = append(sources, *p.Source)
		}
	}
	if search == nil || !search.ProviderExecuted || search.State != "result" || search.IsError {
		t.Fatalf("stored search %+v in %+v", search, msgs[1].Content.Parts)
	}
	var args struct{ Query string }
	var res llm.WebSearchResult
	if json.Unmarshal(search.Args, &args) != nil || args.Query != "northernmost city in the United States" {
		t.Errorf("search args %s", search.Args)
	}
	if json.Unmarshal(search.Result, &res) != nil || res.Query != args.Query || !slices.Equal(res.Results, []llm.Source{{URL: page.URI, Title: page.Title}}) {
		t.Errorf("search result %s", search.Result)
	}
	if !slices.Equal(sources, []agentcore.Source{{URL: page.URI, Title: page.Title}}) {
		t.Errorf("sources %+v", sources)
	}
	if call == nil || call.ToolName != "weather" || call.State != "result" || !strings.Contains(string(call.Result), "-20 C in Utqia") {
		t.Errorf("weather call %+v", call)
	}
	if text := msgs[1].Content.Text(); !strings.Contains(text, "Utqiaġvik, Alaska.") || !strings.HasSuffix(text, "It is -20 C there.") {
		t.Errorf("answer %q", text)
	}
	if n := len(find(events, agentcore.EventStepStart)); n != 2 {
		t.Errorf("%d steps, want the search step and the answer after the weather", n)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	for i, r := range reqs {
		if !strings.Contains(r.Body, `{"googleSearch":{}}`) || !strings.Contains(r.Body, `"includeServerSideToolInvocations":true`) || !strings.Contains(r.Body, `"name":"weather"`) {
			t.Errorf("request %d lacks Google Search beside the weather tool: %s", i, r.Body)
		}
	}
	if !strings.Contains(reqs[1].Body, `"toolCall":{"args":{"queries":["northernmost city in the United States"]},"id":"s1"`) ||
		strings.Index(reqs[1].Body, `"toolResponse"`) > strings.Index(reqs[1].Body, `"functionCall"`) {
		t.Errorf("the search's parts did not go back before the call: %s", reqs[1].Body)
	}
}

// A run that waits for the user resumes from the store: the function
// call's thought signature and the search's parts, kept in the stored
// message, go back in the request that continues the turn (Gemini 3
// refuses a function call of the current turn without its signature).
func TestGeminiSignatureSurvivesSuspension(t *testing.T) {
	srv := llmtest.NewGeminiServer(t)
	srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiSearchCall("s1", "sig-search\x00\xff", "ports in use")}, Usage: llmtest.GeminiUsage{Prompt: 40}},
		{Parts: []map[string]any{llmtest.GeminiSearchResponse("s1", ""), llmtest.GeminiFunctionCall("q1", "ask", map[string]any{"question": "Which port?"}, "sig-call\x00\xfe")},
			Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 40, Candidates: 9},
			Grounding: llmtest.GeminiGrounding([]string{"ports in use"}, llmtest.GeminiPage{URI: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/ports", Title: "iana.org"})},
	}})
	path := filepath.Join(t.TempDir(), "p.db")
	open := func() (*agentcore.Runtime, func()) {
		db, err := storage.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := llm.Config{APIKeys: map[string]string{"google": "k"}, BaseURLs: map[string]string{"google": srv.URL}, Getenv: func(string) string { return "" }, MaxRetries: -1}
		agent := &agentcore.Agent{ID: "a", Model: "google/gemini-3-pro-preview",
			Tools:  map[string]*agentcore.Tool{"ask": askTool(), "web_search": {ID: llm.WebSearch, ProviderDefined: true}},
			Models: func(spec string) (llm.Model, error) { return llm.Open(spec, cfg) }}
		rt := agentcore.NewRuntime(db, nil, agent)
		return rt, func() { rt.Close(); db.Close() }
	}
	rt, closeRT := open()
	th := thread(t, rt)
	if _, err := rt.Send(t.Context(), agentcore.SendRequest{ThreadID: th.ID, Text: "deploy it"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Wait(t.Context(), th.ID); err != nil {
		t.Fatal(err)
	}
	closeRT() // quit with the question open

	rt, closeRT = open()
	defer closeRT()
	srv.Push(llmtest.GeminiReply{Chunks: []llmtest.GeminiChunk{
		{Parts: []map[string]any{llmtest.GeminiText("Deploying on 8080.")}, Finish: "STOP", Usage: llmtest.GeminiUsage{Prompt: 90, Candidates: 5}},
	}})
	q1 := callIDOf(t, messages(t, rt, th.ID), "q1")
	if _, err := rt.Resume(t.Context(), agentcore.ResumeRequest{ThreadID: th.ID, ToolCallID: q1, Data: json.RawMessage(`"8080"`)}); err != nil {
		t.Fatal(err)
	}
	_ = rt.Wait(t.Context(), th.ID)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				ToolCall         json.RawMessage `json:"toolCall"`
				ToolResponse     json.RawMessage `json:"toolResponse"`
				FunctionCall     json.RawMessage `json:"functionCall"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
				ThoughtSignature []byte          `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	reqs[1].Decode(t, &body)
	var got []string
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			kind := "text"
			switch {
			case p.ToolCall != nil:
				kind = "toolCall"
			case p.ToolResponse != nil:
				kind = "toolResponse"
			case p.FunctionCall != nil:
				kind = "functionCall"
			case p.FunctionResponse != nil:
				kind = "functionResponse"
			}
			got = append(got, c.Role+":"+kind+"+"+string(p.ThoughtSignature))
		}
	}
	want := []string{"user:text+", "model:toolCall+sig-search\x00\xff", "model:toolResponse+", "model:functionCall+sig-call\x00\xfe", "user:functionResponse+"}
	if !slices.Equal(got, want) {
		t.Errorf("resumed request %q, want %q:\n%s", got, want, reqs[1].Body)
	}
	msgs, _ := rt.ListMessages(t.Context(), th.ID, agentcore.MessageQuery{})
	if len(msgs) != 2 || !strings.HasSuffix(msgs[1].Content.Text(), "Deploying on 8080.") {
		t.Fatalf("messages %+v", msgs)
	}
}
