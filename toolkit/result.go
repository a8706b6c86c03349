package toolkit

import "parley/agentcore"

// Result is the output of Mastra's built-in tools: text for the model and
// whether it reports a failure. Mastra's built-ins never throw; a failure
// is a result with IsError set.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"isError"`
}

// resultToModel shows the model a Result's content, as an error when it is
// one.
func resultToModel(out any) agentcore.ModelOutput {
	switch r := out.(type) {
	case Result:
		if r.IsError {
			return agentcore.ModelOutput{Type: "error-text", Value: r.Content}
		}
		return agentcore.ModelOutput{Type: "text", Value: r.Content}
	case *Result:
		return resultToModel(*r)
	}
	return agentcore.ModelOutput{Type: "json", Value: out}
}
