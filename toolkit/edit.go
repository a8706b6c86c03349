package toolkit

import "parley/agentcore"

// Edit returns the tools that change the workspace, keyed by the names
// Mastra Code gives them: write_file (unrestricted), edit_file,
// delete_file, mkdir and execute_command. Build mode offers these beside
// ReadOnly's.
func Edit(ws *Workspace) map[string]*agentcore.Tool {
	return map[string]*agentcore.Tool{
		"write_file":      WriteFileTool(ws, nil),
		"edit_file":       EditFileTool(ws),
		"delete_file":     DeleteFileTool(ws),
		"mkdir":           MkdirTool(ws),
		"execute_command": ExecuteCommandTool(ws),
	}
}

// Permission categories of tools (Mastra Code's read|edit|execute|…),
// which approval policies are set by.
const (
	CategoryRead    = "read"
	CategoryEdit    = "edit"
	CategoryExecute = "execute"
	CategoryWeb     = "web"
	CategoryMCP     = "mcp" // the tools of MCP servers (the app knows which)
	CategoryOther   = "other"
)

// Category is the permission category of the tool named name: ask_user,
// submit_plan, the task_* tools and any name it does not know (an MCP
// tool, a custom one) are CategoryOther.
func Category(name string) string {
	switch name {
	case "view", "find_files", "search_content":
		return CategoryRead
	case "write_file", "edit_file", "delete_file", "mkdir":
		return CategoryEdit
	case "execute_command":
		return CategoryExecute
	case "web_fetch", "web_search":
		return CategoryWeb
	}
	return CategoryOther
}
