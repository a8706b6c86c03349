package toolkit

import "parley/agentcore"

// Result is the output of Mastra's built-in tools: text for the model and
// whether it reports a failure. Mastra's built-ins never throw; a failure
// is a result with IsError set.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"isError"`
}

// resultToModel shows the model the whole Result as JSON, {content,
// isError}, as Mastra does; a failure is marked so the card shows it.
func resultToModel(out any) agentcore.ModelOutput {
	switch r := out.(type) {
	case Result:
		if r.IsError {
			return agentcore.ModelOutput{Type: "error-json", Value: r}
		}
		return agentcore.ModelOutput{Type: "json", Value: r}
	case *Result:
		return resultToModel(*r)
	}
	return agentcore.ModelOutput{Type: "json", Value: out}
}
