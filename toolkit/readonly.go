package toolkit

import "parley/agentcore"

// ReadOnly returns the tools that read the workspace without changing it,
// keyed by the names Mastra Code gives them: view, find_files,
// search_content. Plan mode offers only these.
func ReadOnly(ws *Workspace) map[string]*agentcore.Tool {
	return map[string]*agentcore.Tool{
		"view":           ViewTool(ws),
		"find_files":     FindFilesTool(ws),
		"search_content": SearchContentTool(ws),
	}
}
