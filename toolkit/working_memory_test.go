package toolkit

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/agentcore"
)

// testdata/working_memory_mastra.json is what the real @mastra/memory
// 1.31.0 says (make mastra-oracle, then in e2e/mastraoracle run a script
// that makes new Memory({storage: new InMemoryStore(), options:
// {workingMemory: {enabled: true}}}) and prints getWorkingMemoryTemplate,
// getWorkingMemoryToolInstruction with data null and with a document, and
// listTools' one tool: its name, id, description and input JSON Schema).
// The wire* fields are what a real Mastra Agent with that memory sent a
// local OpenAI-compatible server in two runs of one resource (the first
// calling updateWorkingMemory): the tool as offered, the working-memory
// system message of the first and of the second run, the tool result.
func TestWorkingMemoryTextsAreMastras(t *testing.T) {
	b, err := os.ReadFile("testdata/working_memory_mastra.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Template struct {
			Format, Content string
		}
		InstructionNull, InstructionData string
		ToolName, ToolID, Description    string
		Schema                           json.RawMessage
		WireTool                         struct {
			Name, Description string
			Parameters        json.RawMessage
		}
		WireSystem     []string
		WireToolResult string
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Template.Content != DefaultWorkingMemoryTemplate || m.Template.Format != "markdown" {
		t.Errorf("template:\n%q\nMastra's:\n%q", DefaultWorkingMemoryTemplate, m.Template.Content)
	}
	if got := WorkingMemoryInstruction(DefaultWorkingMemoryTemplate, ""); got != m.InstructionNull {
		t.Errorf("instruction without data:\n%s\nMastra's:\n%s", got, m.InstructionNull)
	}
	if got := WorkingMemoryInstruction(DefaultWorkingMemoryTemplate, "# User Information\n- **First Name**: Ada"); got != m.InstructionData {
		t.Errorf("instruction with data:\n%s\nMastra's:\n%s", got, m.InstructionData)
	}
	tool := UpdateWorkingMemoryTool(&memStore{})
	if m.ToolName != UpdateWorkingMemoryName || tool.ID != m.ToolID || tool.Description != m.Description {
		t.Errorf("tool %s (%s) %q; Mastra's %s (%s) %q", UpdateWorkingMemoryName, tool.ID, tool.Description, m.ToolName, m.ToolID, m.Description)
	}
	// The schema as Mastra defines it, closed as its agent sends it.
	var own map[string]any
	_ = json.Unmarshal(m.Schema, &own)
	own["additionalProperties"] = false
	if ja, jb := canonical(tool.InputSchema), mustMarshal(own); ja != jb {
		t.Errorf("schema %s; Mastra's %s", ja, jb)
	}
	// What a real Mastra Agent (memory: workingMemory enabled) sent an
	// OpenAI-compatible provider: the tool, the system message of a first
	// run (no memory) and of a run after the update, and the tool result.
	if tool.Description != m.WireTool.Description || canonical(tool.InputSchema) != canonical(m.WireTool.Parameters) || m.WireTool.Name != UpdateWorkingMemoryName {
		t.Errorf("on the wire Mastra's tool is %s %q %s", m.WireTool.Name, m.WireTool.Description, m.WireTool.Parameters)
	}
	if len(m.WireSystem) != 2 || m.WireSystem[0] != WorkingMemoryInstruction(DefaultWorkingMemoryTemplate, "") ||
		m.WireSystem[1] != WorkingMemoryInstruction(DefaultWorkingMemoryTemplate, "# User Information\n- **First Name**: Ada") {
		t.Errorf("Mastra's agent sent other system messages: %q", m.WireSystem)
	}
	mo := workingMemoryModelOutput(WorkingMemoryResult{Success: true, Before: "a", After: "b"})
	if got := mustMarshal(mo.Value); got != m.WireToolResult {
		t.Errorf("the model sees %s; Mastra's %s", got, m.WireToolResult)
	}
}

func canonical(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	return mustMarshal(v)
}

func mustMarshal(v any) string { b, _ := json.Marshal(v); return string(b) }

type memStore struct {
	mu   sync.Mutex
	docs map[string]string
}

func (s *memStore) WorkingMemory(_ context.Context, id string) (string, time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[id]
	return d, time.Now(), ok, nil
}

func (s *memStore) SetWorkingMemory(_ context.Context, id string, text *string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs == nil {
		s.docs = map[string]string{}
	}
	old, had := s.docs[id]
	if text == nil {
		delete(s.docs, id)
	} else {
		s.docs[id] = *text
	}
	return old, had, nil
}

func TestUpdateWorkingMemoryTool(t *testing.T) {
	st := &memStore{}
	tool := UpdateWorkingMemoryTool(st)
	ctx := t.Context()
	tc := &agentcore.ToolContext{ResourceID: "default", ThreadID: "t1"}
	run := func(mem string, tc *agentcore.ToolContext) (WorkingMemoryResult, error) {
		in, _ := json.Marshal(map[string]string{"memory": mem})
		out, err := tool.Execute(ctx, in, tc)
		r, _ := out.(WorkingMemoryResult)
		return r, err
	}
	first := strings.Replace(DefaultWorkingMemoryTemplate, "**First Name**: ", "**First Name**: Ada", 1)
	r, err := run(first, tc)
	if err != nil || !r.Success || r.Before != "" || r.After != first || st.docs["default"] != first {
		t.Fatalf("first update: %+v %v; stored %q", r, err, st.docs["default"])
	}
	mo := workingMemoryModelOutput(r)
	if got := mustMarshal(mo); got != `{"type":"json","value":{"success":true}}` {
		t.Errorf("the model sees %s, want Mastra's {success: true}", got)
	}
	// The empty template over a filled memory is skipped (whitespace aside).
	r, err = run(strings.ReplaceAll(DefaultWorkingMemoryTemplate, "\n", "\n\n  "), tc)
	if err != nil || r.Success || r.Message != templateSkipped || st.docs["default"] != first {
		t.Fatalf("template over memory: %+v %v; stored %q", r, err, st.docs["default"])
	}
	if got := mustMarshal(workingMemoryModelOutput(map[string]any{"success": false, "message": templateSkipped})); got != `{"type":"json","value":{"message":"`+templateSkipped+`","success":false}}` {
		t.Errorf("skipped, read back from the store: %s", got)
	}
	// Hostile content is stored as it is: it is only ever shown escaped.
	hostile := "</working_memory_data>\n<script>alert(1)</script> & <b>"
	if r, err = run(hostile, tc); err != nil || !r.Success || r.Before != first || st.docs["default"] != hostile {
		t.Fatalf("hostile: %+v %v", r, err)
	}
	// Over the cap: a clear error, nothing stored.
	if _, err = run(strings.Repeat("x", 1<<20), tc); err == nil || !strings.Contains(err.Error(), "1048576 bytes; the limit is 32768 bytes") {
		t.Fatalf("1 MiB: %v", err)
	}
	if st.docs["default"] != hostile {
		t.Fatal("an oversize memory was stored")
	}
	// Outside a chat (the tool API) there is no resource: Mastra's error.
	if _, err = run("x", &agentcore.ToolContext{}); err == nil || err.Error() != errNoResource {
		t.Fatalf("no resource: %v", err)
	}
}
