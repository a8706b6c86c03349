package agentcore

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RepairToolInput returns raw if it is valid JSON, else a repaired version,
// else an error for the model. (Interim version; see repair_test.go.)
func RepairToolInput(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "{}", nil
	}
	if json.Valid([]byte(raw)) {
		return raw, nil
	}
	var err error
	var v any
	if err = json.Unmarshal([]byte(raw), &v); err != nil {
		return "", fmt.Errorf("invalid JSON in tool arguments: %v", err)
	}
	return raw, nil
}
