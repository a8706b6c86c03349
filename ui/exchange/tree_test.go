package exchange

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

// sampleTree is sampleThread with its first message edited and its first
// reply regenerated: the edit and its reply are the older versions,
// inactive, and the branch shown is the original question's.
func sampleTree() (agentcore.Thread, []agentcore.Message) {
	th, msgs := sampleThread()
	for i := 1; i < len(msgs); i++ {
		msgs[i].ParentID = msgs[i-1].ID
	}
	regen := msgs[1]
	regen.ID, regen.Active, regen.Content, regen.CreatedAt = "m2b", false, agentcore.TextContent("an older answer"), t0.Add(3*time.Minute)
	edit := agentcore.Message{ID: "m1b", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleUser, Content: agentcore.TextContent("Why does it build?"),
		Status: agentcore.StatusComplete, CreatedAt: t0.Add(4 * time.Minute)}
	editReply := agentcore.Message{ID: "m2c", ThreadID: "th1", ResourceID: "default", Role: agentcore.RoleAssistant, Content: agentcore.TextContent("It does."),
		Status: agentcore.StatusComplete, CreatedAt: t0.Add(5 * time.Minute), ParentID: "m1b"}
	return th, append(msgs, regen, edit, editReply)
}

// The JSON export carries the whole tree: each message names its parent,
// those off the branch shown are marked inactive, and reading the file
// gives back the same tree.
func TestJSONTreeRoundTrip(t *testing.T) {
	th, msgs := sampleTree()
	data, err := JSON(th, msgs, t0)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Messages []struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			Inactive bool   `json:"inactive"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range f.Messages {
		got = append(got, fmt.Sprintf("%s<%s inactive=%v", m.ID, m.ParentID, m.Inactive))
	}
	want := []string{"m1< inactive=false", "m2<m1 inactive=false", "m3<m2 inactive=false", "m4<m3 inactive=false", "m5<m4 inactive=false",
		"m2b<m1 inactive=true", "m1b< inactive=true", "m2c<m1b inactive=true"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the file's tree\n got %v\nwant %v", got, want)
	}
	res, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	if back := res.Threads[0].Messages; !reflect.DeepEqual(back, msgs) {
		for i := range msgs {
			if !reflect.DeepEqual(back[i], msgs[i]) {
				t.Errorf("message %d\n got %+v\nwant %+v", i, back[i], msgs[i])
			}
		}
	}
}

// A parentId that does not name an earlier message of the file is refused,
// naming the message; a message id Parley does not accept that other
// messages name as their parent is replaced in both places.
func TestReadTreeParents(t *testing.T) {
	th, msgs := sampleTree()
	good, _ := JSON(th, msgs, t0)
	parent := func(i int, p string) []byte {
		var v map[string]any
		_ = json.Unmarshal(good, &v)
		v["messages"].([]any)[i].(map[string]any)["parentId"] = p
		b, _ := json.Marshal(v)
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"a later message", parent(1, "m3"), `messages[1]: parentId "m3" is not the id of an earlier message of this thread`},
		{"itself", parent(2, "m3"), `messages[2]: parentId "m3" is not the id of an earlier message`},
		{"unknown", parent(7, "elsewhere"), `messages[7]: parentId "elsewhere" is not the id of an earlier message`},
		{"hostile", parent(7, `"><script>alert(1)</script>`+strings.Repeat("x", 100)), `messages[7]: parentId "\"><script>alert(1)</script>xxxxxxxxxxxxx" is not`},
		{"empty: a root", parent(7, ""), ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data
			if tc.want == "" { // an empty parent is a root: read, not refused
				if _, err := Read(data); err != nil {
					t.Fatal(err)
				}
				return
			}
			_, err := Read(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %s", err, tc.want)
			}
		})
	}

	for i, bad := range hostileIDs {
		th, msgs := sampleTree()
		msgs[0].ID = bad
		msgs[1].ParentID, msgs[5].ParentID = bad, bad
		data, err := JSON(th, msgs, t0)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Read(data)
		if err != nil {
			t.Fatalf("id %d: %v", i, err)
		}
		if res.ReplacedIDs != 1 {
			t.Errorf("id %d: ReplacedIDs = %d, want 1", i, res.ReplacedIDs)
		}
		got := res.Threads[0].Messages
		if !agentcore.ValidID(got[0].ID) || got[1].ParentID != got[0].ID || got[5].ParentID != got[0].ID {
			t.Fatalf("id %d: the root became %.40q, its children name %.40q and %.40q", i, got[0].ID, got[1].ParentID, got[5].ParentID)
		}
	}
}

// chatGPTBranches is a conversation as ChatGPT's export writes it, with an
// edited first question (two roots below the hidden system message) and a
// regenerated reply with a follow-up under it, where current_node is: the
// branch shown is the regenerated reply's, neither the first nor the last.
const chatGPTBranches = `[{
 "title": "Capitals",
 "create_time": 1714600000.0,
 "update_time": 1714600500.0,
 "mapping": {
  "client-created-root": {"id": "client-created-root", "message": null, "parent": null, "children": ["sys"]},
  "sys": {"id": "sys", "parent": "client-created-root", "children": ["u1", "u1e"], "message": {"id": "sys", "author": {"role": "system", "name": null, "metadata": {}}, "create_time": null, "update_time": null, "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully", "end_turn": true, "weight": 0.0, "metadata": {"is_visually_hidden_from_conversation": true}, "recipient": "all", "channel": null}},
  "u1": {"id": "u1", "parent": "sys", "children": ["a1", "a1b"], "message": {"id": "u1", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714600010.0, "update_time": null, "content": {"content_type": "text", "parts": ["What is the capital of Australia?"]}, "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {"request_id": "r-1", "message_source": null, "timestamp_": "absolute", "message_type": null}, "recipient": "all", "channel": null}},
  "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600012.0, "update_time": null, "content": {"content_type": "text", "parts": ["Sydney."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"finish_details": {"type": "stop", "stop_tokens": [200002]}, "is_complete": true, "model_slug": "gpt-4o", "default_model_slug": "gpt-4o", "parent_id": "u1", "request_id": "r-1", "timestamp_": "absolute"}, "recipient": "all", "channel": null}},
  "a1b": {"id": "a1b", "parent": "u1", "children": ["u2"], "message": {"id": "a1b", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600100.0, "update_time": null, "content": {"content_type": "text", "parts": ["Canberra, not Sydney."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"finish_details": {"type": "stop", "stop_tokens": [200002]}, "is_complete": true, "model_slug": "gpt-4o-mini", "default_model_slug": "gpt-4o", "parent_id": "u1", "request_id": "r-2", "timestamp_": "absolute"}, "recipient": "all", "channel": null}},
  "u2": {"id": "u2", "parent": "a1b", "children": ["a2"], "message": {"id": "u2", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714600200.0, "update_time": null, "content": {"content_type": "text", "parts": ["And its population?"]}, "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {"request_id": "r-3", "timestamp_": "absolute"}, "recipient": "all", "channel": null}},
  "a2": {"id": "a2", "parent": "u2", "children": [], "message": {"id": "a2", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600210.0, "update_time": null, "content": {"content_type": "text", "parts": ["About 470,000."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"is_complete": true, "model_slug": "gpt-4o", "parent_id": "u2", "request_id": "r-3", "timestamp_": "absolute"}, "recipient": "all", "channel": null}},
  "u1e": {"id": "u1e", "parent": "sys", "children": ["a3"], "message": {"id": "u1e", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714600400.0, "update_time": null, "content": {"content_type": "text", "parts": ["What is the capital of Austria?"]}, "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {"request_id": "r-4", "timestamp_": "absolute"}, "recipient": "all", "channel": null}},
  "a3": {"id": "a3", "parent": "u1e", "children": [], "message": {"id": "a3", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600410.0, "update_time": null, "content": {"content_type": "text", "parts": ["Vienna."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"is_complete": true, "model_slug": "gpt-4o", "parent_id": "u1e", "request_id": "r-4", "timestamp_": "absolute"}, "recipient": "all", "channel": null}}
 },
 "moderation_results": [],
 "current_node": "a2",
 "plugin_ids": null,
 "conversation_id": "6640c1d0-aaaa-bbbb-cccc-ddddeeeeffff",
 "conversation_template_id": null,
 "gizmo_id": null,
 "gizmo_type": null,
 "is_archived": false,
 "is_starred": null,
 "safe_urls": [],
 "default_model_slug": "gpt-4o",
 "conversation_origin": null,
 "voice": null,
 "async_status": null,
 "disabled_tool_ids": [],
 "id": "6640c1d0-aaaa-bbbb-cccc-ddddeeeeffff"
}]`

// A ChatGPT conversation with a regenerated reply and an edited question
// reads as the same tree, current_node's branch active.
func TestReadChatGPTBranches(t *testing.T) {
	res, err := Read([]byte(chatGPTBranches))
	if err != nil {
		t.Fatal(err)
	}
	got := treeRows(res.Threads[0].Messages)
	want := []string{
		`user "What is the capital of Australia?" parent=-1 active`,
		`assistant "Sydney." parent=0`,
		`assistant "Canberra, not Sydney." parent=0 active`,
		`user "And its population?" parent=2 active`,
		`assistant "About 470,000." parent=3 active`,
		`user "What is the capital of Austria?" parent=-1`,
		`assistant "Vienna." parent=5`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tree\n got %q\nwant %q", got, want)
	}
	if m := res.Threads[0].Messages[2].Content.Metadata["model"]; m != "chatgpt/gpt-4o-mini" {
		t.Errorf("the regenerated reply's model: %v", m)
	}

	// Loops and dangling parents off the branch shown are refused too.
	for _, tc := range []struct{ name, edit, want string }{
		{"dangling", `"u1e": {"id": "u1e", "parent": "gone", "children": []}`, `node "u1e" names parent "gone", which is not in the mapping`},
		{"loop", `"u1e": {"id": "u1e", "parent": "a3", "children": ["a3"]}`, `node "a3" is in a loop of parents`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := strings.Index(chatGPTBranches, `"u1e": {`)
			j := i + strings.Index(chatGPTBranches[i:], "\n")
			data := chatGPTBranches[:i] + tc.edit + "," + chatGPTBranches[j:]
			if _, err := Read([]byte(data)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %s", err, tc.want)
			}
		})
	}
}

// treeRows is a tree as text: role, text, parent's position, active.
func treeRows(msgs []agentcore.Message) []string {
	pos := map[string]int{}
	var out []string
	for i, m := range msgs {
		p, ok := pos[m.ParentID]
		if m.ParentID == "" || !ok {
			p = -1
		}
		pos[m.ID] = i
		row := fmt.Sprintf("%s %q parent=%d", m.Role, m.Content.Text(), p)
		if m.Active {
			row += " active"
		}
		out = append(out, row)
	}
	return out
}

// The Markdown export is the branch shown, and says how many other
// versions the chat has, only when it has any.
func TestMarkdownOtherVersions(t *testing.T) {
	th, msgs := sampleTree()
	md := string(Markdown(th, msgs, t0))
	if !strings.Contains(md, "· 5 messages ·") ||
		!strings.Contains(md, "\n*This chat has 3 other versions of messages not shown here; Parley's JSON export keeps them all.*\n") {
		t.Fatalf("markdown of a tree:\n%s", md)
	}
	for _, hidden := range []string{"an older answer", "Why does it build?", "It does."} {
		if strings.Contains(md, hidden) {
			t.Errorf("markdown shows %q, of another branch", hidden)
		}
	}
	if md := string(Markdown(th, msgs[:6], t0)); !strings.Contains(md, "This chat has 1 other version of a message not shown here;") {
		t.Errorf("one other version:\n%s", md)
	}
	if md := string(Markdown(th, msgs[:5], t0)); strings.Contains(md, "other version") {
		t.Errorf("a chat of one branch mentions other versions:\n%s", md)
	}
}
