package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"parley/agentcore"
	"parley/agentcore/scripted"
)

// manifestSchemas reads the served manifest's response schemas by
// "METHOD /path" (Mastra's path, without /api).
func manifestSchemas(t *testing.T, e *apiEnv) map[string]*jsonschema.Resolved {
	t.Helper()
	resp := e.send("GET", "/api/system/api-schema", "")
	defer resp.Body.Close()
	var m struct {
		Routes []struct {
			Method         string          `json:"method"`
			Path           string          `json:"path"`
			ResponseSchema json.RawMessage `json:"responseSchema"`
		} `json:"routes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, r := range m.Routes {
		if len(r.ResponseSchema) == 0 {
			continue
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(r.ResponseSchema, &s); err != nil {
			t.Fatalf("%s %s: schema: %v", r.Method, r.Path, err)
		}
		s.Schema = "http://json-schema.org/draft-07/schema#" // the manifest's dialect (api_schema.mjs drops the tag)
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s %s: resolve schema: %v", r.Method, r.Path, err)
		}
		out[r.Method+" "+r.Path] = rs
	}
	return out
}

// seedRuns makes two runs on thread t1 (resource u1): one that calls the
// weather tool and answers, one that fails. It returns their ids.
func seedRuns(t *testing.T, e *apiEnv) (ok, bad string) {
	t.Helper()
	e.model.Push(scripted.Reply{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "weather", Args: `{"city":"Oslo"}`}}})
	e.model.Push(scripted.Reply{Text: "Sunny in Oslo, a zebra day.", Usage: scripted.Usage{PromptTokens: 9, CompletionTokens: 4}})
	got := e.call("POST", "/api/agents/parley/generate", `{"messages":"Weather in Oslo?","memory":{"thread":"t1","resource":"u1"},"runId":"run-ok"}`, http.StatusOK)
	if got["text"] != "Sunny in Oslo, a zebra day." {
		t.Fatalf("generate: %v", got)
	}
	e.model.Push(scripted.Reply{Status: http.StatusBadRequest, ErrorBody: `{"error":{"message":"model says no"}}`})
	e.call("POST", "/api/agents/parley/generate", `{"messages":"again","memory":{"thread":"t1","resource":"u1"},"runId":"run-bad"}`, http.StatusBadGateway)
	list := e.call("GET", "/api/observability/traces/light", "", http.StatusOK)
	bad, _ = get(list, "spans", 0, "traceId").(string)
	ok, _ = get(list, "spans", 1, "traceId").(string)
	if ok == "" || bad == "" {
		t.Fatalf("the runs are not listed: %v", list)
	}
	return ok, bad
}

// Every route added for the mastra CLI's command groups answers what
// Mastra's schema says: a 200 validates against the route's
// responseSchema; an error is Mastra's {"error": "…"} with the status
// asked for.
func TestAPIObserveSchemas(t *testing.T) {
	e := newAPIEnv(t, withTools)
	schemas := manifestSchemas(t, e)
	ok, bad := seedRuns(t, e)
	q := url.QueryEscape
	cases := []struct {
		route, path, body string
		status            int
	}{
		{"GET /memory/search", "/api/memory/search?agentId=parley&resourceId=u1&searchQuery=zebra&limit=5", "", 200},
		{"GET /memory/search", "/api/memory/search?agentId=parley&resourceId=u1&threadId=t1&searchQuery=" + q("oslo"), "", 200},
		{"GET /memory/status", "/api/memory/status?agentId=parley", "", 200},
		{"GET /memory/threads/:threadId/working-memory", "/api/memory/threads/t1/working-memory?agentId=parley", "", 200},
		{"GET /memory/threads/:threadId/working-memory", "/api/memory/threads/nope/working-memory?agentId=parley", "", 200},
		{"POST /memory/threads/:threadId/working-memory", "/api/memory/threads/t1/working-memory?agentId=parley", `{"workingMemory":"x"}`, 400},
		{"GET /workflows", "/api/workflows", "", 200},
		{"GET /workflows/:workflowId", "/api/workflows/w1", "", 404},
		{"GET /workflows/:workflowId/runs", "/api/workflows/w1/runs", "", 404},
		{"GET /workflows/:workflowId/runs/:runId", "/api/workflows/w1/runs/r1", "", 404},
		{"POST /workflows/:workflowId/start-async", "/api/workflows/w1/start-async", `{}`, 404},
		{"POST /workflows/:workflowId/resume-async", "/api/workflows/w1/resume-async?runId=r1", `{}`, 404},
		{"POST /workflows/:workflowId/runs/:runId/cancel", "/api/workflows/w1/runs/r1/cancel", `{}`, 404},
		{"GET /mcp/v0/servers", "/api/mcp/v0/servers", "", 200},
		{"GET /mcp/v0/servers", "/api/mcp/v0/servers?page=1&perPage=1", "", 200},
		{"GET /mcp/v0/servers/:id", "/api/mcp/v0/servers/parley", "", 200},
		{"GET /mcp/v0/servers/:id", "/api/mcp/v0/servers/other", "", 404},
		{"GET /mcp/:serverId/tools", "/api/mcp/parley/tools", "", 200},
		{"GET /mcp/:serverId/tools/:toolId", "/api/mcp/parley/tools/list_chats", "", 200},
		{"GET /mcp/:serverId/tools/:toolId", "/api/mcp/parley/tools/nope", "", 404},
		{"POST /mcp/:serverId/tools/:toolId/execute", "/api/mcp/parley/tools/list_chats/execute", `{"data":{"limit":5}}`, 200},
		{"POST /mcp/:serverId/tools/:toolId/execute", "/api/mcp/parley/tools/read_chat/execute", `{"data":{"threadId":"t1"}}`, 200},
		{"POST /mcp/:serverId/tools/:toolId/execute", "/api/mcp/parley/tools/read_chat/execute", `{"data":{"threadId":"missing"}}`, 200},
		{"POST /mcp/:serverId/tools/:toolId/execute", "/api/mcp/other/tools/list_chats/execute", `{"data":{}}`, 404},
		{"GET /observability/traces/light", "/api/observability/traces/light", "", 200},
		{"GET /observability/traces/light", "/api/observability/traces/light?page=0&perPage=1&threadId=t1&status=error", "", 200},
		{"GET /observability/traces", "/api/observability/traces?perPage=5", "", 200},
		{"GET /observability/traces/:traceId/light", "/api/observability/traces/" + ok + "/light", "", 200},
		{"GET /observability/traces/:traceId/light", "/api/observability/traces/" + bad + "/light", "", 200},
		{"GET /observability/traces/:traceId", "/api/observability/traces/" + ok, "", 200},
		{"GET /observability/traces/:traceId/light", "/api/observability/traces/nope/light", "", 404},
		{"GET /observability/traces/:traceId/spans/:spanId", "/api/observability/traces/" + ok + "/spans/" + ok, "", 200},
		{"GET /observability/traces/:traceId/spans/:spanId", "/api/observability/traces/" + ok + "/spans/" + ok + "-model", "", 200},
		{"GET /observability/traces/:traceId/spans/:spanId", "/api/observability/traces/" + ok + "/spans/nope", "", 404},
		{"POST /observability/traces/query", "/api/observability/traces/query", `{"timeRange":{"from":"2000-01-01T00:00:00Z","to":"2999-01-01T00:00:00Z"},"page":{"limit":1}}`, 200},
		{"POST /observability/traces/query", "/api/observability/traces/query", `{"timeRange":{"from":"2000-01-01T00:00:00Z","to":"2999-01-01T00:00:00Z"},"orderBy":[{"field":"endedAt","direction":"asc"}],"page":{"after":"1"}}`, 200},
		{"GET /observability/logs", "/api/observability/logs", "", 200},
		{"GET /observability/logs", "/api/observability/logs?level=error&perPage=1", "", 200},
		{"POST /observability/metrics/aggregate", "/api/observability/metrics/aggregate", `{"name":["latency_ms"],"aggregation":"avg"}`, 200},
		{"POST /observability/metrics/breakdown", "/api/observability/metrics/breakdown", `{"name":"latency_ms","groupBy":["model"]}`, 200},
		{"POST /observability/metrics/timeseries", "/api/observability/metrics/timeseries", `{"name":["latency_ms"],"interval":"1h"}`, 200},
		{"POST /observability/metrics/percentiles", "/api/observability/metrics/percentiles", `{"name":"latency_ms","percentiles":[0.5]}`, 200},
		{"GET /observability/discovery/metric-names", "/api/observability/discovery/metric-names", "", 200},
		{"GET /observability/discovery/metric-label-keys", "/api/observability/discovery/metric-label-keys?metricName=x", "", 200},
		{"GET /observability/discovery/metric-label-values", "/api/observability/discovery/metric-label-values?metricName=x&labelKey=y", "", 200},
		{"GET /observability/scores", "/api/observability/scores?page=0&perPage=50", "", 200},
		{"GET /observability/scores/:scoreId", "/api/observability/scores/s1", "", 200},
		{"POST /observability/scores", "/api/observability/scores", `{"score":{"scorerId":"q","score":1}}`, 501},
		{"DELETE /observability/scores", "/api/observability/scores", `{"scoreIds":["s1"]}`, 200},
		{"DELETE /observability/feedback", "/api/observability/feedback", `{"feedbackIds":["f1"]}`, 200},
		{"GET /datasets", "/api/datasets", "", 200},
		{"POST /datasets", "/api/datasets", `{"name":"eval"}`, 501},
		{"GET /datasets/:datasetId", "/api/datasets/d1", "", 404},
		{"GET /datasets/:datasetId/items", "/api/datasets/d1/items", "", 404},
		{"GET /datasets/:datasetId/experiments", "/api/datasets/d1/experiments", "", 404},
		{"POST /datasets/:datasetId/experiments", "/api/datasets/d1/experiments", `{"name":"x"}`, 404},
		{"GET /datasets/:datasetId/experiments/:experimentId", "/api/datasets/d1/experiments/x1", "", 404},
		{"GET /datasets/:datasetId/experiments/:experimentId/results", "/api/datasets/d1/experiments/x1/results", "", 404},
	}
	for _, c := range cases {
		method := strings.Fields(c.route)[0]
		resp := e.send(method, c.path, c.body)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d: %s", method, c.path, resp.StatusCode, c.status, raw)
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Errorf("%s %s: not JSON: %s", method, c.path, raw)
			continue
		}
		if c.status != http.StatusOK {
			if msg, _ := get(v, "error").(string); msg == "" || strings.Contains(msg, "no API route") {
				t.Errorf("%s %s: error body %s", method, c.path, raw)
			}
			continue
		}
		rs := schemas[c.route]
		if rs == nil {
			t.Errorf("%s is not in the served manifest", c.route)
			continue
		}
		if err := rs.Validate(v); err != nil {
			t.Errorf("%s %s: the answer does not fit Mastra's schema: %v\n%s", method, c.path, err, raw)
		}
	}
}

// What the runs look like as traces, logs and search results.
func TestAPIObserveContent(t *testing.T) {
	e := newAPIEnv(t, withTools)
	ok, bad := seedRuns(t, e)

	list := e.call("GET", "/api/observability/traces/light", "", 200)
	if get(list, "pagination", "total") != 2.0 || get(list, "spans", 0, "traceId") != bad ||
		get(list, "spans", 0, "status") != "error" || get(list, "spans", 1, "status") != "success" ||
		get(list, "spans", 1, "spanType") != "agent_run" || get(list, "spans", 1, "entityId") != "parley" {
		t.Errorf("trace list: %v", list)
	}
	if msg, _ := get(list, "spans", 0, "error", "message").(string); !strings.Contains(msg, "model says no") {
		t.Errorf("failed run's error: %v", get(list, "spans", 0, "error"))
	}

	tr := e.call("GET", "/api/observability/traces/"+ok, "", 200)
	spans, _ := tr["spans"].([]any)
	types := []string{}
	for _, s := range spans {
		types = append(types, get(s, "spanType").(string))
	}
	if strings.Join(types, ",") != "agent_run,model_generation,tool_call" {
		t.Fatalf("spans %v", types)
	}
	if get(spans[2], "name") != "tool: 'weather'" || get(spans[2], "input", "city") != "Oslo" ||
		get(spans[2], "output", "temp") != 21.0 || get(spans[2], "status") != "success" ||
		get(spans[2], "parentSpanId") != get(spans[1], "spanId") {
		t.Errorf("tool span %v", spans[2])
	}
	if get(spans[0], "input") != "Weather in Oslo?" || get(spans[0], "output") != "Sunny in Oslo, a zebra day." ||
		get(spans[1], "attributes", "usage", "totalTokens") == nil || get(spans[0], "resourceId") != "u1" {
		t.Errorf("run span %v / model span %v", spans[0], spans[1])
	}
	if _, full := get(e.call("GET", "/api/observability/traces/"+ok+"/light", "", 200), "spans", 0).(map[string]any)["input"]; full {
		t.Error("the light trace has the span's input")
	}

	logs := e.call("GET", "/api/observability/logs?level=error", "", 200)
	if get(logs, "pagination", "total") != 1.0 || get(logs, "logs", 0, "runId") != bad || get(logs, "logs", 0, "level") != "error" {
		t.Errorf("error logs: %v", logs)
	}

	found := e.call("GET", "/api/memory/search?agentId=parley&resourceId=u1&searchQuery=zebra", "", 200)
	if get(found, "count") != 1.0 || get(found, "results", 0, "threadId") != "t1" || get(found, "results", 0, "role") != "assistant" ||
		!strings.Contains(get(found, "results", 0, "content").(string), "zebra") {
		t.Errorf("memory search: %v", found)
	}
	if other := e.call("GET", "/api/memory/search?agentId=parley&resourceId=someone-else&searchQuery=zebra", "", 200); get(other, "count") != 0.0 {
		t.Errorf("another resource's search found %v", other)
	}
	if wm := e.call("GET", "/api/memory/threads/t1/working-memory?agentId=parley", "", 200); wm["threadExists"] != true || wm["workingMemory"] != nil {
		t.Errorf("working memory %v", wm)
	}

	tools := e.call("GET", "/api/mcp/parley/tools", "", 200)
	names := []string{}
	for _, tl := range tools["tools"].([]any) {
		names = append(names, get(tl, "name").(string))
	}
	if strings.Join(names, ",") != "ask_user,list_chats,notify,read_chat,request_approval" {
		t.Errorf("mcp tools %v", names)
	}
	chats := e.call("POST", "/api/mcp/parley/tools/list_chats/execute", `{"data":{}}`, 200)
	if get(chats, "result", "chats", 0, "id") != "t1" {
		t.Errorf("list_chats: %v", chats)
	}
	if bad := e.call("POST", "/api/mcp/parley/tools/read_chat/execute", `{"data":{"threadId":"missing"}}`, 200); get(bad, "result", "error") != true {
		t.Errorf("read_chat of a missing chat: %v", bad)
	}
}

// Every value from the client is checked: bad ones are 400s that name the
// field, unknown ids 404s, in Mastra's error shape.
func TestAPIObserveHostile(t *testing.T) {
	e := newAPIEnv(t, withTools)
	cases := []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"GET", "/api/memory/search?agentId=parley&resourceId=u1", "", 400, `"searchQuery"`},
		{"GET", "/api/memory/search?agentId=parley&searchQuery=x", "", 400, `"resourceId"`},
		{"GET", "/api/memory/search?searchQuery=x&resourceId=u", "", 400, `"agentId"`},
		{"GET", "/api/memory/search?agentId=ghost&searchQuery=x&resourceId=u", "", 404, "ghost"},
		{"GET", "/api/memory/search?agentId=parley&searchQuery=x&resourceId=u&limit=100000", "", 400, "limit"},
		{"GET", "/api/memory/search?agentId=parley&searchQuery=x&resourceId=u&threadId=" + url.QueryEscape("../x"), "", 400, "threadId"},
		{"GET", "/api/memory/search?agentId=parley&resourceId=u&searchQuery=" + strings.Repeat("a", 2000), "", 400, "searchQuery"},
		{"GET", "/api/memory/status", "", 400, `"agentId"`},
		{"GET", "/api/memory/status?agentId=ghost", "", 404, "ghost"},
		{"GET", "/api/memory/threads/t1/working-memory", "", 400, `"agentId"`},
		{"GET", "/api/memory/threads/" + url.PathEscape("a b") + "/working-memory?agentId=parley", "", 400, "threadId"},
		{"POST", "/api/memory/threads/t1/working-memory?agentId=parley", `{}`, 400, `"workingMemory"`},
		{"POST", "/api/memory/threads/t1/working-memory?agentId=parley", `{"workingMemory":5}`, 400, "workingMemory"},
		{"POST", "/api/memory/threads/t1/working-memory?agentId=parley", `{"workingMemory":"x"}`, 400, "no working memory"},
		{"GET", "/api/workflows/x", "", 404, "Workflow not found"},
		{"GET", "/api/mcp/v0/servers?perPage=-1", "", 400, "perPage"},
		{"GET", "/api/mcp/v0/servers?page=99999999999999999999", "", 400, "page"},
		{"GET", "/api/mcp/v0/servers/parley?version=2", "", 404, "version"},
		{"GET", "/api/mcp/nope/tools", "", 404, "MCP server with ID 'nope' not found"},
		{"POST", "/api/mcp/parley/tools/notify/execute", `{"data":"text"}`, 400, "data"},
		{"POST", "/api/mcp/parley/tools/ask_user/execute", `{"data":{},"resumeData":{"answer":"x"}}`, 400, "resumeData"},
		{"POST", "/api/mcp/parley/tools/list_chats/execute", `[]`, 400, "object"},
		{"POST", "/api/mcp/parley/tools/nope/execute", `{"data":{}}`, 404, "Tool with ID 'nope'"},
		{"GET", "/api/observability/traces/light?perPage=1000", "", 400, "perPage"},
		{"GET", "/api/observability/traces/light?page=-1", "", 400, "page"},
		{"GET", "/api/observability/traces/light?status=weird", "", 400, "status"},
		{"GET", "/api/observability/traces/" + url.PathEscape("a.b") + "/light", "", 400, "traceId"},
		{"GET", "/api/observability/traces/ghost", "", 404, "Trace with ID ghost not found"},
		{"GET", "/api/observability/traces/ghost/spans/x", "", 404, "ghost"},
		{"POST", "/api/observability/traces/query", `{}`, 400, `"timeRange"`},
		{"POST", "/api/observability/traces/query", `{"timeRange":{"from":"2020-01-01T00:00:00Z"}}`, 400, `"timeRange.to"`},
		{"POST", "/api/observability/traces/query", `{"timeRange":{"from":"yesterday","to":"2020-01-01T00:00:00Z"}}`, 400, "from"},
		{"POST", "/api/observability/traces/query", `{"timeRange":{"from":"2020-01-01T00:00:00Z","to":"2020-01-01T00:00:00Z"},"where":{"op":"and"}}`, 400, "where"},
		{"POST", "/api/observability/traces/query", `{"timeRange":{"from":"2020-01-01T00:00:00Z","to":"2020-01-01T00:00:00Z"},"page":{"limit":0}}`, 400, "page.limit"},
		{"POST", "/api/observability/traces/query", `{"timeRange":{"from":"2020-01-01T00:00:00Z","to":"2020-01-01T00:00:00Z"},"page":{"after":"zz"}}`, 400, "page.after"},
		{"POST", "/api/observability/traces/query", `{"timeRange":{"from":"2020-01-01T00:00:00Z","to":"2020-01-01T00:00:00Z"},"orderBy":[{"field":"name","direction":"asc"}]}`, 400, "orderBy.0.field"},
		{"GET", "/api/observability/logs?level=loud", "", 400, "level"},
		{"GET", "/api/observability/logs?perPage=0", "", 400, "perPage"},
		{"POST", "/api/observability/metrics/aggregate", `{}`, 400, `"name"`},
		{"POST", "/api/observability/metrics/breakdown", `{"name":[]}`, 400, `"name"`},
		{"GET", "/api/observability/discovery/metric-label-keys", "", 400, `"metricName"`},
		{"GET", "/api/observability/discovery/metric-label-values?metricName=x", "", 400, `"labelKey"`},
		{"GET", "/api/observability/scores?perPage=abc", "", 400, "perPage"},
		{"POST", "/api/observability/scores", `{"score":{"score":1}}`, 400, `"score.scorerId"`},
		{"DELETE", "/api/observability/scores", `{}`, 400, `"scoreIds"`},
		{"DELETE", "/api/observability/scores", `{"scoreIds":"s1"}`, 400, `"scoreIds"`},
		{"DELETE", "/api/observability/feedback", `{"feedbackIds":[` + strings.TrimSuffix(strings.Repeat(`"f",`, 1001), ",") + `]}`, 400, "at most 1000"},
		{"POST", "/api/datasets", `{}`, 400, `"name"`},
		{"GET", "/api/datasets/ghost/items", "", 404, "Dataset not found: ghost"},
		{"GET", "/api/datasets?page=-3", "", 400, "page"},
	}
	for _, c := range cases {
		resp := e.send(c.method, c.path, c.body)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v map[string]any
		_ = json.Unmarshal(raw, &v)
		msg, _ := v["error"].(string)
		if resp.StatusCode != c.status || !strings.Contains(msg, c.says) {
			t.Errorf("%s %s %s: %d %s, want %d naming %s", c.method, c.path, c.body, resp.StatusCode, raw, c.status, c.says)
		}
	}
}

// ask_user through the MCP registry route waits, as over MCP: the question
// is in the chat's inbox while the request lasts, and the request ends
// when its client gives up.
func TestAPIMCPExecuteAskWaits(t *testing.T) {
	e := newAPIEnv(t, withTools)
	seedRuns(t, e)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/api/mcp/parley/tools/ask_user/execute",
		strings.NewReader(`{"data":{"threadId":"t1","question":"Ship it?","id":"q-1"}}`))
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for {
		notes, err := e.rt.Notifications(t.Context(), agentcore.NotificationQuery{ThreadID: "t1", Text: "Ship it?"})
		if err != nil {
			t.Fatal(err)
		}
		if len(notes) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("ask_user answered before the user did: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the request answered after its client gave up")
	}
}

// A trace reads its run's messages from the end of a long chat back to the
// run, page by page: an old run's tool call is found behind later pages.
func TestAPITraceInLongChat(t *testing.T) {
	e := newAPIEnv(t, withTools)
	ctx := t.Context()
	th, err := e.db.CreateThread(ctx, agentcore.Thread{ID: "long", ResourceID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	add := func(i int, m agentcore.Message) {
		m.ThreadID, m.ResourceID, m.CreatedAt, m.Status = th.ID, "u1", at(i), agentcore.StatusComplete
		if _, err := e.db.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	add(0, agentcore.Message{Role: agentcore.RoleUser, Content: agentcore.TextContent("Old question")})
	run := agentcore.Run{ID: "old-run", ThreadID: th.ID, AgentID: "parley", Model: "openai-compatible/x", Status: agentcore.RunRunning, StartedAt: at(1)}
	if err := e.db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	reply := agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "tool-invocation", ToolInvocation: &agentcore.ToolInvocation{
		State: "result", ToolCallID: "old-call", ToolName: "weather", Args: json.RawMessage(`{"city":"Rome"}`), Result: json.RawMessage(`{"temp":30}`)}}}}
	add(1, agentcore.Message{Role: agentcore.RoleAssistant, Content: reply, RunID: run.ID})
	run.Status, run.FinishedAt = agentcore.RunDone, at(2)
	if err := e.db.FinishRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := range 450 { // later chat, over two pages
		add(3+i, agentcore.Message{Role: agentcore.RoleUser, Content: agentcore.TextContent("later")})
	}
	tr := e.call("GET", "/api/observability/traces/old-run", "", http.StatusOK)
	if get(tr, "spans", 2, "spanId") != "tool-old-call" || get(tr, "spans", 2, "input", "city") != "Rome" || get(tr, "spans", 0, "input") != "Old question" {
		t.Errorf("old run's trace: %v", tr)
	}
}
