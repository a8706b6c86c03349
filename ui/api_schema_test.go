package ui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The schema manifest lists routes Parley serves, each as Mastra's server
// describes it; every one answers (no "no API route"), and the ones the
// mastra CLI asks for with --schema are there.
func TestAPISchemaManifest(t *testing.T) {
	e := newAPIEnv(t, withTools)
	resp := e.send("GET", "/api/system/api-schema", "")
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("api-schema: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var m struct {
		Version int `json:"version"`
		Routes  []struct {
			Method     string          `json:"method"`
			Path       string          `json:"path"`
			BodySchema json.RawMessage `json:"bodySchema"`
		} `json:"routes"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Version != 1 {
		t.Fatalf("manifest: version %d, %v", m.Version, err)
	}
	if strings.Contains(string(raw), "://") {
		t.Error("the manifest names a web address")
	}
	have := map[string]json.RawMessage{}
	for _, r := range m.Routes {
		have[r.Method+" "+r.Path] = r.BodySchema
		path := "/api" + strings.NewReplacer(":agentId", "parley", ":toolId", "weather", ":threadId", "nope").Replace(r.Path)
		resp := e.send(r.Method, path, "{}")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "Parley has no API route") {
			t.Errorf("%s %s is in the manifest but not served", r.Method, r.Path)
		}
	}
	// What `mastra api … --schema` asks for, for the commands Parley serves.
	for _, k := range []string{"GET /agents", "POST /agents/:agentId/generate", "GET /tools", "POST /tools/:toolId/execute",
		"GET /memory/threads", "POST /memory/threads", "PATCH /memory/threads/:threadId", "DELETE /memory/threads/:threadId",
		"GET /memory/threads/:threadId/messages"} {
		if _, ok := have[k]; !ok {
			t.Errorf("%s is not in the manifest", k)
		}
	}
	if !strings.Contains(string(have["POST /tools/:toolId/execute"]), `"data"`) {
		t.Errorf("tool execute body schema %s", have["POST /tools/:toolId/execute"])
	}
}
