package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"parley/agentcore"
)

// ChatGPT's data export (Settings → Data controls → Export) holds
// conversations.json: an array of conversations, each a tree of nodes
// ("mapping": id → {message, parent, children}) because editing a message
// or regenerating a reply branches the conversation. The branch the user
// last saw ends at current_node; following parents from there to the root
// gives the conversation as it was shown.

type gptConversation struct {
	Title       string             `json:"title"`
	CreateTime  *float64           `json:"create_time"`
	UpdateTime  *float64           `json:"update_time"`
	Mapping     map[string]gptNode `json:"mapping"`
	CurrentNode *string            `json:"current_node"`
	ID          string             `json:"id"`
	ConvID      string             `json:"conversation_id"`
}

type gptNode struct {
	Message *gptMessage `json:"message"`
	Parent  *string     `json:"parent"`
}

type gptMessage struct {
	Author struct {
		Role string `json:"role"`
	} `json:"author"`
	CreateTime *float64 `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
	} `json:"content"`
	Recipient string         `json:"recipient"`
	Metadata  map[string]any `json:"metadata"`
}

// readChatGPT reads an array of conversations; each becomes a thread.
func readChatGPT(data []byte) (Result, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return Result{}, fmt.Errorf("read the conversations: %w", err)
	}
	if len(raws) == 0 {
		return Result{}, errors.New("the file is an empty array: no conversations to import")
	}
	res := Result{Kind: KindChatGPT}
	for i, raw := range raws {
		var c gptConversation
		if err := strictObject(raw, &c); err != nil {
			return Result{}, fmt.Errorf("conversation %d: %w", i+1, err)
		}
		imp, err := c.thread()
		if err != nil {
			return Result{}, fmt.Errorf("conversation %d (%q): %w", i+1, c.Title, err)
		}
		if len(imp.Messages) == 0 {
			res.Skipped++
			continue
		}
		res.Threads = append(res.Threads, imp)
	}
	if len(res.Threads) == 0 {
		return Result{}, fmt.Errorf("none of the %d conversations has user or assistant text to import", len(raws))
	}
	return res, nil
}

// thread is the conversation's shown branch as a thread.
func (c gptConversation) thread() (agentcore.ThreadImport, error) {
	if c.Mapping == nil {
		return agentcore.ThreadImport{}, errors.New(`"mapping" is missing: not a ChatGPT conversation`)
	}
	if c.CurrentNode == nil || *c.CurrentNode == "" {
		return agentcore.ThreadImport{}, errors.New(`"current_node" is missing: which branch was shown is unknown`)
	}
	branch, err := c.branch(*c.CurrentNode)
	if err != nil {
		return agentcore.ThreadImport{}, err
	}
	created := seconds(c.CreateTime)
	t := agentcore.Thread{
		ResourceID: "default", Title: strings.TrimSpace(c.Title),
		Metadata:  map[string]any{"importedFrom": "chatgpt"},
		CreatedAt: created, UpdatedAt: seconds(c.UpdateTime),
	}
	if id := firstOf(c.ConvID, c.ID); id != "" {
		t.Metadata["chatgptId"] = id
	}
	if t.Title == "" {
		t.Title = "ChatGPT conversation"
	}
	imp := agentcore.ThreadImport{Thread: t}
	for _, n := range branch {
		m, ok := n.Message.message()
		if !ok {
			continue
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = created
		}
		// Text split around a hidden tool call, or two user turns in a
		// row, read as one message.
		if k := len(imp.Messages) - 1; k >= 0 && imp.Messages[k].Role == m.Role {
			prev := &imp.Messages[k]
			text := prev.Content.Text() + "\n\n" + m.Content.Text()
			meta := prev.Content.Metadata
			prev.Content = agentcore.TextContent(text)
			prev.Content.Metadata = meta
			continue
		}
		imp.Messages = append(imp.Messages, m)
	}
	return imp, nil
}

// maxDepth bounds a branch: far beyond any real conversation, it stops a
// crafted file from making the walk long.
const maxDepth = 100_000

// branch is the nodes from the root to id, in order.
func (c gptConversation) branch(id string) ([]gptNode, error) {
	var rev []gptNode
	seen := map[string]bool{}
	for cur := id; ; {
		n, ok := c.Mapping[cur]
		if !ok {
			if cur == id {
				return nil, fmt.Errorf("current_node %q is not in the mapping", id)
			}
			return nil, fmt.Errorf("node %q names a parent that is not in the mapping", cur)
		}
		if seen[cur] || len(rev) >= maxDepth {
			return nil, fmt.Errorf("the parent chain from current_node loops at node %q", cur)
		}
		seen[cur] = true
		rev = append(rev, n)
		if n.Parent == nil || *n.Parent == "" {
			break
		}
		parent := *n.Parent
		if _, ok := c.Mapping[parent]; !ok {
			return nil, fmt.Errorf("node %q names parent %q, which is not in the mapping", cur, parent)
		}
		cur = parent
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, nil
}

// message is a node's message as a Parley message; ok is false for what a
// reader of the conversation never saw: the empty root, system prompts and
// custom instructions, hidden messages, tool calls and tool output, and
// reasoning summaries.
func (g *gptMessage) message() (agentcore.Message, bool) {
	if g == nil {
		return agentcore.Message{}, false
	}
	role := agentcore.Role(g.Author.Role)
	if role != agentcore.RoleUser && role != agentcore.RoleAssistant {
		return agentcore.Message{}, false
	}
	if hidden, _ := g.Metadata["is_visually_hidden_from_conversation"].(bool); hidden {
		return agentcore.Message{}, false
	}
	if g.Recipient != "" && g.Recipient != "all" {
		return agentcore.Message{}, false // addressed to a tool
	}
	switch g.Content.ContentType {
	case "text", "multimodal_text":
	default:
		return agentcore.Message{}, false
	}
	var texts []string
	for _, raw := range g.Content.Parts {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s = strings.TrimSpace(s); s != "" {
				texts = append(texts, s)
			}
			continue
		}
		if first(raw) == '{' {
			texts = append(texts, "*[an attachment that was not imported]*")
		}
	}
	text := strings.Join(texts, "\n\n")
	if strings.TrimSpace(strings.ReplaceAll(text, "*[an attachment that was not imported]*", "")) == "" {
		return agentcore.Message{}, false
	}
	m := agentcore.Message{Role: role, Content: agentcore.TextContent(text), CreatedAt: seconds(g.CreateTime)}
	if slug, _ := g.Metadata["model_slug"].(string); slug != "" && role == agentcore.RoleAssistant {
		m.Content.Metadata = map[string]any{"model": "chatgpt/" + slug}
	}
	return m, true
}

// seconds is ChatGPT's float seconds since the epoch as a time (zero when
// absent or absurd).
func seconds(v *float64) time.Time {
	if v == nil || *v <= 0 || math.IsNaN(*v) || *v > 1e11 {
		return time.Time{}
	}
	return time.UnixMilli(int64(*v * 1000)).UTC()
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
