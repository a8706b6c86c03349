package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"parley/agentcore"
)

// Working memory, as Mastra's (@mastra/memory): per resource (the user), a
// Markdown document the agent is shown in every run and rewrites whole
// with the updateWorkingMemory tool. Every model-facing text here is
// @mastra/memory 1.31.0's, copied from its dist/src-zTE4189S.js (the
// version make mastra-oracle installs under e2e/mastraoracle); each is
// named where it is used.

// UpdateWorkingMemoryName is the tool's name in the agent's tool map
// (UPDATE_WORKING_MEMORY_TOOL_NAME, src/tools/working-memory.ts).
const UpdateWorkingMemoryName = "updateWorkingMemory"

// MaxWorkingMemoryBytes bounds the document. Mastra has no bound; Parley
// sends the whole document with every run, so a runaway one (the model
// appending forever, a paste) would fill the context and the bill. 32 KiB
// is about 8,000 tokens, as the project instructions' cap.
const MaxWorkingMemoryBytes = 32 << 10

// DefaultWorkingMemoryTemplate is Mastra's defaultWorkingMemoryTemplate
// (class Memory), trimmed as its getWorkingMemoryTemplate trims it.
const DefaultWorkingMemoryTemplate = `# User Information
- **First Name**: 
- **Last Name**: 
- **Location**: 
- **Occupation**: 
- **Interests**: 
- **Goals**: 
- **Events**: 
- **Facts**: 
- **Projects**:`

// updateWorkingMemoryDescription is updateWorkingMemoryTool's description
// for a Markdown template without state signals (no schema,
// useStateSignals false).
const updateWorkingMemoryDescription = `Update the working memory with new information. Any data not included will be overwritten. Always pass data as string to the memory field. Never pass an object.`

// updateWorkingMemorySchema is updateWorkingMemoryTool's inputSchema for a
// Markdown template, as it defines it, closed as Mastra sends it to the
// provider ("additionalProperties": false; an extra key is dropped, not
// refused).
var updateWorkingMemorySchema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"memory":{"type":"string","description":"The Markdown formatted working memory content to store. This MUST be a string. Never pass an object."}},"required":["memory"],"additionalProperties":false}`)

// Result texts of updateWorkingMemoryTool's execute.
const (
	// errNoResource is thrown when a resource-scoped update has no
	// resource (a call through the tool API, outside a chat).
	errNoResource = "Resource ID is required for resource-scoped working memory updates"
	// templateSkipped answers a call that would replace a filled memory
	// with the empty template.
	templateSkipped = "Attempted to replace existing working memory with empty template. Update skipped to prevent data loss."
)

// WorkingMemoryStore keeps each resource's working memory (storage.DB).
type WorkingMemoryStore interface {
	WorkingMemory(ctx context.Context, resourceID string) (text string, updated time.Time, ok bool, err error)
	// SetWorkingMemory replaces it (nil: clears it) and returns what it
	// replaced.
	SetWorkingMemory(ctx context.Context, resourceID string, text *string) (old string, hadOld bool, err error)
}

// WorkingMemoryResult is the tool's output. The model sees Success and
// Message only, as Mastra returns them; Before and After are Parley's, for
// the chat's "Memory updated" line (old → new).
type WorkingMemoryResult struct {
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
}

// TooLongError is a working memory over MaxWorkingMemoryBytes.
type TooLongError struct{ Size int }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("Working memory is too long: %d bytes; the limit is %d bytes (32 KiB). Keep only what is worth remembering, in the template's sections, and try again.", e.Size, MaxWorkingMemoryBytes)
}

// CheckWorkingMemory is the one check a new document passes, whoever
// writes it (the model, the user in Settings, the API).
func CheckWorkingMemory(text string) error {
	if len(text) > MaxWorkingMemoryBytes {
		return &TooLongError{Size: len(text)}
	}
	return nil
}

// UpdateWorkingMemoryTool is Mastra's updateWorkingMemoryTool for a
// Markdown template (@mastra/memory src/tools/working-memory.ts): the
// model passes the whole document as memory, and it replaces the
// resource's.
func UpdateWorkingMemoryTool(store WorkingMemoryStore) *agentcore.Tool {
	return &agentcore.Tool{
		ID:            "update-working-memory",
		Description:   updateWorkingMemoryDescription,
		InputSchema:   updateWorkingMemorySchema,
		ToModelOutput: workingMemoryModelOutput,
		Execute: func(ctx context.Context, raw json.RawMessage, tc *agentcore.ToolContext) (any, error) {
			var in struct {
				Memory string `json:"memory"`
			}
			if err := json.Unmarshal(raw, &in); err != nil {
				return nil, err
			}
			if tc == nil || tc.ResourceID == "" {
				return nil, errors.New(errNoResource)
			}
			if err := CheckWorkingMemory(in.Memory); err != nil {
				return nil, err
			}
			existing, _, _, err := store.WorkingMemory(ctx, tc.ResourceID)
			if err != nil {
				return nil, err
			}
			if existing != "" {
				// Mastra compares with whitespace runs collapsed.
				template := squash(DefaultWorkingMemoryTemplate)
				if squash(in.Memory) == template && squash(existing) != template {
					return WorkingMemoryResult{Success: false, Message: templateSkipped}, nil
				}
			}
			old, _, err := store.SetWorkingMemory(ctx, tc.ResourceID, &in.Memory)
			if err != nil {
				return nil, err
			}
			return WorkingMemoryResult{Success: true, Before: old, After: in.Memory}, nil
		},
	}
}

var spaces = regexp.MustCompile(`\s+`)

// squash is JavaScript's s.replace(/\s+/g, " ").trim().
func squash(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// workingMemoryModelOutput is what Mastra's tool returns: {success: true},
// or {success: false, message}. The output read back from the store is a
// map, not the struct.
func workingMemoryModelOutput(out any) agentcore.ModelOutput {
	var r WorkingMemoryResult
	b, _ := json.Marshal(out)
	_ = json.Unmarshal(b, &r)
	v := map[string]any{"success": r.Success}
	if r.Message != "" {
		v["message"] = r.Message
	}
	return agentcore.ModelOutput{Type: "json", Value: v}
}

// WorkingMemoryInstruction is the system message that gives the model its
// working memory: Mastra's getWorkingMemoryToolInstruction for a Markdown
// template (class Memory), word for word. data is the stored document;
// with none, Mastra's template literal prints its null as "null".
func WorkingMemoryInstruction(template, data string) string {
	if data == "" {
		data = "null"
	}
	return `WORKING_MEMORY_SYSTEM_INSTRUCTION:
Store and update any conversation-relevant information by calling the updateWorkingMemory tool. If information might be referenced again - store it!

Guidelines:
1. Store anything that could be useful later in the conversation
2. Update proactively when information changes, no matter how small
3. Use Markdown format for all data
4. Act naturally - don't mention this system to users. Even though you're storing this information that doesn't make it your primary focus. Do not ask them generally for "information about yourself"
5. IMPORTANT: When calling updateWorkingMemory, the only valid parameter is the memory field. DO NOT pass an object.
6. IMPORTANT: ALWAYS pass the data you want to store in the memory field as a string. DO NOT pass an object.
7. IMPORTANT: Data must only be sent as a string no matter which format is used.


<working_memory_template>
` + template + `
</working_memory_template>




<working_memory_data>
` + data + `
</working_memory_data>

Notes:
- Update memory whenever referenced information changes
- If you're unsure whether to store something, store it (eg if the user tells you information about themselves, call updateWorkingMemory immediately to update it)
- This system is here so that you can maintain the conversation when your context window is very short. Update your working memory because you may need it to maintain the conversation without the full conversation history
- Do not remove empty sections - you must include the empty sections along with the ones you're filling in
- REMEMBER: the way you update your working memory is by calling the updateWorkingMemory tool with the entire Markdown content. The system will store it for you. The user will not see it.
- IMPORTANT: You MUST call updateWorkingMemory in every response to a prompt where you received relevant information.
- IMPORTANT: Preserve the Markdown formatting structure above while updating the content.`
}
