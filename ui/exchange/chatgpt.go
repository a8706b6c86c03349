package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"parley/agentcore"
)

// ChatGPT's data export (Settings → Data controls → Export) holds
// conversations.json: an array of conversations, each a tree of nodes
// ("mapping": id → {message, parent, children}) because editing a message
// or regenerating a reply branches the conversation. The branch the user
// last saw ends at current_node; following parents from there to the root
// gives the conversation as it was shown. The import keeps the whole tree,
// with that branch active.

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
	Message  *gptMessage `json:"message"`
	Parent   *string     `json:"parent"`
	Children []string    `json:"children"` // the order of the versions below
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

// thread is the conversation as a thread: every branch, the one shown
// active. Nodes a reader never saw are left out, their children following
// the nearest message above them; a message that continues one of the same
// role (text split around a hidden tool call, two user turns in a row)
// reads as one message with it.
func (c gptConversation) thread() (agentcore.ThreadImport, error) {
	if c.Mapping == nil {
		return agentcore.ThreadImport{}, errors.New(`"mapping" is missing: not a ChatGPT conversation`)
	}
	if c.CurrentNode == nil || *c.CurrentNode == "" {
		return agentcore.ThreadImport{}, errors.New(`"current_node" is missing: which branch was shown is unknown`)
	}
	if _, err := c.branch(*c.CurrentNode); err != nil {
		return agentcore.ThreadImport{}, err
	}
	order, err := c.order()
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
	var (
		at        = make(map[string]int, len(order)) // node → the message it is, joined or follows (-1: none)
		parents   []int                              // per message, its parent's index (-1: a root)
		continued []bool                             // per message: a message follows it or was joined to it
	)
	for _, id := range order {
		n := c.Mapping[id]
		up := -1
		if n.Parent != nil {
			if i, ok := at[*n.Parent]; ok { // always: order puts parents first
				up = i
			}
		}
		m, ok := n.Message.message()
		if !ok {
			at[id] = up
			continue
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = created
		}
		if up >= 0 && imp.Messages[up].Role == m.Role && !continued[up] {
			prev := &imp.Messages[up]
			text := prev.Content.Text() + "\n\n" + m.Content.Text()
			meta := prev.Content.Metadata
			prev.Content = agentcore.TextContent(text)
			prev.Content.Metadata = meta
			continued[up] = true
			at[id] = up
			continue
		}
		m.ID = agentcore.NewID()
		if up >= 0 {
			m.ParentID = imp.Messages[up].ID
			continued[up] = true
		}
		at[id] = len(imp.Messages)
		imp.Messages = append(imp.Messages, m)
		parents = append(parents, up)
		continued = append(continued, false)
	}
	for i := at[*c.CurrentNode]; i >= 0; i = parents[i] {
		imp.Messages[i].Active = true
	}
	return imp, nil
}

// order is every node of the mapping, each parent before its children:
// the roots by time, and below each node its children in the order the
// node lists them (by time, for those it does not). A node whose parent is
// not in the mapping, or that is in a loop of parents, is an error. The
// walk keeps its own stack, so a deep tree cannot exhaust Go's.
func (c gptConversation) order() ([]string, error) {
	ids := make([]string, 0, len(c.Mapping))
	for id := range c.Mapping {
		ids = append(ids, id)
	}
	slices.Sort(ids) // the map's order is random; ties are broken by id
	var roots []string
	children := map[string][]string{}
	for _, id := range ids {
		p := c.Mapping[id].Parent
		if p == nil || *p == "" {
			roots = append(roots, id)
			continue
		}
		if _, ok := c.Mapping[*p]; !ok {
			return nil, fmt.Errorf("node %q names parent %q, which is not in the mapping", id, *p)
		}
		children[*p] = append(children[*p], id)
	}
	byTime := func(a, b string) int { return c.Mapping[a].time().Compare(c.Mapping[b].time()) }
	slices.SortStableFunc(roots, byTime)
	for p, kids := range children {
		listed := map[string]int{}
		for i, id := range c.Mapping[p].Children {
			if _, dup := listed[id]; !dup {
				listed[id] = i
			}
		}
		slices.SortStableFunc(kids, func(a, b string) int {
			ia, oka := listed[a]
			ib, okb := listed[b]
			switch {
			case oka && okb:
				return ia - ib
			case oka != okb:
				if oka {
					return -1
				}
				return 1
			}
			return byTime(a, b)
		})
	}
	out := make([]string, 0, len(ids))
	stack := slices.Clone(roots)
	slices.Reverse(stack)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, id)
		for i := len(children[id]) - 1; i >= 0; i-- {
			stack = append(stack, children[id][i])
		}
	}
	if len(out) < len(ids) {
		reached := make(map[string]bool, len(out))
		for _, id := range out {
			reached[id] = true
		}
		for _, id := range ids {
			if !reached[id] {
				return nil, fmt.Errorf("node %q is in a loop of parents", id)
			}
		}
	}
	return out, nil
}

// time is when the node's message was written (zero when unknown).
func (n gptNode) time() time.Time {
	if n.Message == nil {
		return time.Time{}
	}
	return seconds(n.Message.CreateTime)
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
