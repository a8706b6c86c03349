package ui_test

import (
	"encoding/json"
	"strings"
	"testing"

	"parley/agentcore"
)

// A signal's id becomes its message's id on the page: the API refuses one
// Parley would not accept, naming it, and stores nothing.
func TestAPISignalIDChecked(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	for _, bad := range hostileIDs {
		id, _ := json.Marshal(bad)
		v := e.call("POST", "/api/agents/parley/signals", `{"signal":{"id":`+string(id)+`,"type":"reactive","contents":"x"},"resourceId":"me","threadId":"`+th+`","ifIdle":{"behavior":"persist"}}`, 400)
		if msg, _ := get(v, "error").(string); !strings.Contains(msg, "Invalid signal id") {
			t.Errorf("signal id %.40q: error %q", bad, msg)
		}
	}
	msgs, err := e.rt.ListMessages(t.Context(), th, agentcore.MessageQuery{})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("%d messages stored after refused signals (%v)", len(msgs), err)
	}
}
