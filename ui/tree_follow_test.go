package ui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"parley/agentcore"
)

// seedTree stores a chat with a regenerated reply (a follow-up under the
// new one) and an edited first question, the regenerated reply's branch
// shown. It returns the thread and its messages by text.
func seedTree(t *testing.T, e *apiEnv, title string) (string, map[string]string) {
	t.Helper()
	ctx := t.Context()
	th, err := e.rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default", Title: title})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	add := func(role agentcore.Role, text string) {
		m, err := e.db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, Role: role, Content: agentcore.TextContent(text)})
		if err != nil {
			t.Fatal(err)
		}
		ids[text] = m.ID
	}
	rewind := func(id string) {
		if err := e.db.RewindTo(ctx, th.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	add(agentcore.RoleUser, "What is the capital of Australia?")
	add(agentcore.RoleAssistant, "Sydney.")
	rewind(ids["What is the capital of Australia?"])
	add(agentcore.RoleAssistant, "Canberra, not Sydney.")
	add(agentcore.RoleUser, "And its population?")
	add(agentcore.RoleAssistant, "About 470,000.")
	rewind("")
	add(agentcore.RoleUser, "What is the capital of Austria?")
	add(agentcore.RoleAssistant, "Vienna.")
	if err := e.db.SwitchBranch(ctx, th.ID, ids["About 470,000."]); err != nil {
		t.Fatal(err)
	}
	return th.ID, ids
}

// shape is a thread's tree without ids: per message in seq order its role,
// text, its parent's position (-1: a root) and whether it is shown.
func shape(t *testing.T, e *apiEnv, threadID string) []string {
	t.Helper()
	tree, err := e.rt.ListTree(t.Context(), threadID)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	var out []string
	for i, m := range tree {
		p, ok := pos[m.ParentID]
		if m.ParentID == "" {
			p = -1
		} else if !ok {
			t.Fatalf("message %s follows %s, not an earlier message of its thread", m.ID, m.ParentID)
		}
		pos[m.ID] = i
		out = append(out, fmt.Sprintf("%s %q parent=%d active=%v", m.Role, m.Content.Text(), p, m.Active))
	}
	return out
}

// branchText is the chat as shown: the texts of its active branch.
func branchText(t *testing.T, e *apiEnv, threadID string) string {
	t.Helper()
	ms, err := e.rt.ListMessages(t.Context(), threadID, agentcore.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Content.Text())
	}
	return strings.Join(out, " | ")
}

const australia = "What is the capital of Australia? | Canberra, not Sydney. | And its population? | About 470,000."

// Parley's JSON export carries every branch, and importing it rebuilds the
// same tree with the same branch shown: into the same Parley with new ids,
// into another with the file's. The Markdown export is the branch shown,
// and says how many other versions it leaves out.
func TestExportImportTree(t *testing.T) {
	e := newAPIEnv(t)
	id, _ := seedTree(t, e, "Capitals")
	want := shape(t, e, id)
	file := e.download("/t/"+id+"/export.json", "application/json")
	if n := bytes.Count(file, []byte(`"inactive": true`)); n != 3 {
		t.Fatalf("the export marks %d messages inactive, want 3:\n%s", n, file)
	}

	res := e.call("POST", "/api/memory/threads/import", string(file), http.StatusOK)
	newID, _ := get(res, "threads", 0, "id").(string)
	if newID == "" || newID == id || get(res, "threads", 0, "messages") != 7.0 {
		t.Fatalf("import answered %v", res)
	}
	if got := shape(t, e, newID); !slices.Equal(got, want) {
		t.Fatalf("the imported tree\n got %q\nwant %q", got, want)
	}
	if s := branchText(t, e, newID); s != australia {
		t.Errorf("the imported chat shows %q", s)
	}
	again := e.download("/t/"+newID+"/export.json", "application/json")
	if a, b := exportedMessages(t, file, true), exportedMessages(t, again, true); a != b {
		t.Fatalf("messages changed in the round trip:\n%s\n---\n%s", a, b)
	}

	other := newAPIEnv(t)
	other.call("POST", "/api/memory/threads/import", string(file), http.StatusOK)
	a, _ := e.rt.ListTree(t.Context(), id)
	b, _ := other.rt.ListTree(t.Context(), id)
	if len(a) != len(b) {
		t.Fatalf("into another Parley: %d messages, want %d", len(b), len(a))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].ParentID != b[i].ParentID || a[i].Active != b[i].Active {
			t.Errorf("into another Parley, message %d: %s<%s %v, want %s<%s %v", i, b[i].ID, b[i].ParentID, b[i].Active, a[i].ID, a[i].ParentID, a[i].Active)
		}
	}

	md := string(e.download("/t/"+id+"/export.md", "text/markdown"))
	if !strings.Contains(md, "· 4 messages ·") || !strings.Contains(md, "This chat has 3 other versions of messages not shown here; Parley's JSON export keeps them all.") ||
		strings.Contains(md, "Vienna") || !strings.Contains(md, "Canberra") {
		t.Fatalf("markdown of the tree:\n%s", md)
	}
}

// chatGPTRegenerated is a conversation of ChatGPT's export (the shape of
// ui/exchange's fixtures, trimmed): a reply regenerated, with the user's
// follow-up under the new one, and the first question edited; current_node
// is on the regenerated reply's branch.
const chatGPTRegenerated = `[{"title": "Capitals", "create_time": 1714600000.0, "update_time": 1714600500.0, "current_node": "a2",
 "mapping": {
  "root": {"id": "root", "message": null, "parent": null, "children": ["sys"]},
  "sys": {"id": "sys", "parent": "root", "children": ["u1", "u1e"], "message": {"id": "sys", "author": {"role": "system", "name": null, "metadata": {}}, "create_time": null, "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully", "weight": 0.0, "metadata": {"is_visually_hidden_from_conversation": true}, "recipient": "all"}},
  "u1": {"id": "u1", "parent": "sys", "children": ["a1", "a1b"], "message": {"id": "u1", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714600010.0, "content": {"content_type": "text", "parts": ["What is the capital of Australia?"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {}, "recipient": "all"}},
  "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600012.0, "content": {"content_type": "text", "parts": ["Sydney."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4o", "parent_id": "u1"}, "recipient": "all"}},
  "a1b": {"id": "a1b", "parent": "u1", "children": ["u2"], "message": {"id": "a1b", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600100.0, "content": {"content_type": "text", "parts": ["Canberra, not Sydney."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4o", "parent_id": "u1"}, "recipient": "all"}},
  "u2": {"id": "u2", "parent": "a1b", "children": ["a2"], "message": {"id": "u2", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714600200.0, "content": {"content_type": "text", "parts": ["And its population?"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {}, "recipient": "all"}},
  "a2": {"id": "a2", "parent": "u2", "children": [], "message": {"id": "a2", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600210.0, "content": {"content_type": "text", "parts": ["About 470,000."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4o", "parent_id": "u2"}, "recipient": "all"}},
  "u1e": {"id": "u1e", "parent": "sys", "children": ["a3"], "message": {"id": "u1e", "author": {"role": "user", "name": null, "metadata": {}}, "create_time": 1714600400.0, "content": {"content_type": "text", "parts": ["What is the capital of Austria?"]}, "status": "finished_successfully", "weight": 1.0, "metadata": {}, "recipient": "all"}},
  "a3": {"id": "a3", "parent": "u1e", "children": [], "message": {"id": "a3", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1714600410.0, "content": {"content_type": "text", "parts": ["Vienna."]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4o", "parent_id": "u1e"}, "recipient": "all"}}
 },
 "conversation_id": "6640c1d0-aaaa-bbbb-cccc-ddddeeeeffff", "id": "6640c1d0-aaaa-bbbb-cccc-ddddeeeeffff"}]`

// A ChatGPT export with a regenerated reply and an edited question is
// stored as the same tree as Parley's own, current_node's branch shown;
// switching to the edit shows it.
func TestImportChatGPTTree(t *testing.T) {
	e := newAPIEnv(t)
	res := e.call("POST", "/api/memory/threads/import", chatGPTRegenerated, http.StatusOK)
	id, _ := get(res, "threads", 0, "id").(string)
	if get(res, "kind") != "chatgpt" || get(res, "threads", 0, "messages") != 7.0 {
		t.Fatalf("import answered %v", res)
	}
	native, _ := seedTree(t, e, "native")
	if got, want := shape(t, e, id), shape(t, e, native); !slices.Equal(got, want) {
		t.Fatalf("the ChatGPT tree\n got %q\nwant %q", got, want)
	}
	if s := branchText(t, e, id); s != australia {
		t.Errorf("shows %q", s)
	}
	tree, _ := e.rt.ListTree(t.Context(), id)
	if err := e.rt.SwitchBranch(t.Context(), id, tree[5].ID); err != nil {
		t.Fatal(err)
	}
	if s := branchText(t, e, id); s != "What is the capital of Austria? | Vienna." {
		t.Errorf("after switching to the edit: %q", s)
	}
}

// A file whose parent links are not a tree of its own messages is refused
// with an answer that names the message, escaped, and nothing is stored; a
// tree 10,000 levels deep imports.
func TestImportTreeHostileFiles(t *testing.T) {
	e := newAPIEnv(t)
	id, _ := seedTree(t, e, "Capitals")
	foreignID, _ := seedTree(t, e, "Elsewhere")
	foreign, _ := e.rt.ListTree(t.Context(), foreignID)
	good := e.download("/t/"+id+"/export.json", "application/json")
	var f map[string]any
	if err := json.Unmarshal(good, &f); err != nil {
		t.Fatal(err)
	}
	edit := func(parents map[int]string) string {
		var v map[string]any
		_ = json.Unmarshal(good, &v)
		ms := v["messages"].([]any)
		for i, p := range parents {
			ms[i].(map[string]any)["parentId"] = p
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	msgID := func(i int) string { return f["messages"].([]any)[i].(map[string]any)["id"].(string) }
	const markup = `<img src=x onerror=alert(1)>`
	cases := []struct{ name, file, want string }{
		{"another thread's message", edit(map[int]string{1: foreign[0].ID}), `messages[1]: parentId "` + foreign[0].ID + `" is not the id of an earlier message of this thread`},
		{"a later message", edit(map[int]string{1: msgID(3)}), `messages[1]: parentId "` + msgID(3) + `" is not the id of an earlier message`},
		{"itself", edit(map[int]string{2: msgID(2)}), `messages[2]: parentId "` + msgID(2) + `" is not the id`},
		{"a cycle", edit(map[int]string{0: msgID(2), 2: msgID(0)}), `messages[0]: parentId "` + msgID(2) + `"`},
		{"a missing parent", edit(map[int]string{4: "nope"}), `messages[4]: parentId "nope" is not the id`},
		{"markup", edit(map[int]string{4: markup}), `messages[4]: parentId "<img src=x onerror=alert(1)>" is not the id`},
		{"chatgpt: a dangling parent in the second conversation", "[" + strings.Trim(chatGPTRegenerated, "[]") + "," +
			strings.Replace(strings.Trim(chatGPTRegenerated, "[]"), `"parent": "u1e"`, `"parent": "gone"`, 1) + "]", `node "a3" names parent "gone", which is not in the mapping`},
		{"chatgpt: a loop", strings.Replace(chatGPTRegenerated, `"u1e": {"id": "u1e", "parent": "sys"`, `"u1e": {"id": "u1e", "parent": "a3"`, 1), `node "a3" is in a loop of parents`},
	}
	threads := e.threadCount()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := e.call("POST", "/api/memory/threads/import", tc.file, http.StatusBadRequest)
			if msg, _ := get(v, "error").(string); !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q\nwant it to say %s", msg, tc.want)
			}
			page := e.upload([]byte(tc.file))
			if strings.Contains(page, "<img") || !strings.Contains(page, "Nothing was changed.") {
				t.Fatalf("the form's answer: %s", page)
			}
			if n := e.threadCount(); n != threads {
				t.Fatalf("a refused import stored %d threads", n-threads)
			}
		})
	}
	if s := branchText(t, e, id); s != australia {
		t.Errorf("the refusals changed the chat: %q", s)
	}

	// 10,000 levels under a root with a second, short branch; the deep
	// leaf is the one shown.
	const depth = 10_000
	var deep bytes.Buffer
	deep.WriteString(`{"format": "parley.thread", "version": 1, "thread": {"title": "Deep"}, "messages": [`)
	msg := func(id, parent string, inactive bool) {
		fmt.Fprintf(&deep, `{"id": %q, "parentId": %q, "role": "user", "inactive": %v, "content": {"format": 2, "parts": [{"type": "text", "text": %q}]}},`,
			id, parent, inactive, id)
	}
	msg("root", "", false)
	msg("side", "root", true)
	parent := "root"
	for i := range depth {
		msg("d"+strconv.Itoa(i), parent, false)
		parent = "d" + strconv.Itoa(i)
	}
	file := strings.TrimSuffix(deep.String(), ",") + "]}"
	res := e.call("POST", "/api/memory/threads/import", file, http.StatusOK)
	deepID, _ := get(res, "threads", 0, "id").(string)
	ms, err := e.rt.ListMessages(t.Context(), deepID, agentcore.MessageQuery{})
	if err != nil || len(ms) != depth+1 || ms[len(ms)-1].ID != parent {
		t.Fatalf("the deep chat shows %d messages (%v)", len(ms), err)
	}
}

// GET …/messages lists the branch shown, as before the tree; ?tree=true
// lists every branch, each message with its parent (null for a root) and
// whether it is shown.
func TestAPIMessagesTree(t *testing.T) {
	e := newAPIEnv(t)
	id, ids := seedTree(t, e, "Capitals")
	path := "/api/memory/threads/" + id + "/messages"
	body := func(p string) []byte {
		resp := e.send("GET", p, "")
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, resp.StatusCode, b)
		}
		return b
	}
	plain := body(path)
	if !bytes.Equal(plain, body(path+"?tree=false")) {
		t.Fatal("tree=false answers differently from no flag")
	}
	v := e.call("GET", path, "", http.StatusOK)
	if get(v, "total") != 4.0 || get(v, "messages", 1, "id") != ids["Canberra, not Sydney."] {
		t.Fatalf("the branch shown: %s", plain)
	}
	root := get(v, "messages", 0).(map[string]any)
	if _, ok := root["parentId"]; ok {
		t.Errorf("without the flag a root carries parentId: %v", root)
	}
	if _, ok := root["active"]; ok {
		t.Errorf("without the flag a message carries active: %v", root)
	}

	v = e.call("GET", path+"?tree=true", "", http.StatusOK)
	if get(v, "total") != 7.0 || len(get(v, "messages").([]any)) != 7 {
		t.Fatalf("the tree: %v", v)
	}
	var got []string
	for _, m := range get(v, "messages").([]any) {
		m := m.(map[string]any)
		p, ok := m["parentId"]
		if !ok {
			t.Fatalf("a message without parentId: %v", m)
		}
		got = append(got, fmt.Sprintf("%v<%v %v", m["id"], p, m["active"]))
	}
	q1, q2 := ids["What is the capital of Australia?"], ids["What is the capital of Austria?"]
	want := []string{
		q1 + "<<nil> true",
		ids["Sydney."] + "<" + q1 + " false",
		ids["Canberra, not Sydney."] + "<" + q1 + " true",
		ids["And its population?"] + "<" + ids["Canberra, not Sydney."] + " true",
		ids["About 470,000."] + "<" + ids["And its population?"] + " true",
		q2 + "<<nil> false",
		ids["Vienna."] + "<" + q2 + " false",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tree\n got %v\nwant %v", got, want)
	}
	v = e.call("GET", path+"?tree=true&perPage=2&page=3", "", http.StatusOK)
	if get(v, "messages", 0, "id") != ids["Vienna."] || get(v, "hasMore") != false || get(v, "total") != 7.0 {
		t.Fatalf("the tree's last page: %v", v)
	}
	for _, bad := range []string{"yes", "1", "<b>"} {
		v := e.call("GET", path+"?tree="+url.QueryEscape(bad), "", http.StatusBadRequest)
		if msg, _ := get(v, "error").(string); !strings.Contains(msg, "tree must be true or false") {
			t.Errorf("tree=%s: %v", bad, v)
		}
	}
}

// Search finds a message of a branch not shown, and opening the hit shows
// that branch, at that message. A message of another chat, or an id that
// is none, switches nothing.
func TestSearchOpensInactiveBranch(t *testing.T) {
	e := newAPIEnv(t)
	id, ids := seedTree(t, e, "Capitals")
	otherID, otherIDs := seedTree(t, e, "Other capitals")
	hits := e.call("GET", "/api/search?q=Vienna", "", http.StatusOK)
	var hit string
	for _, h := range get(hits, "hits").([]any) {
		if get(h, "threadId") == id {
			hit, _ = get(h, "messageId").(string)
		}
	}
	if hit != ids["Vienna."] {
		t.Fatalf("search for a reply of a branch not shown: %v", hits)
	}
	if code, box := e.searchBox("Vienna"); code != http.StatusOK || !strings.Contains(box, `href="/t/`+id+`?m=`+hit+`"`) {
		t.Fatalf("the search box does not link the hit: %d %s", code, box)
	}

	page := func(p string) string {
		resp := e.send("GET", p, "")
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
		return string(b)
	}
	for _, m := range []string{otherIDs["Vienna."], otherIDs["Sydney."], "nope", `"><script>alert(1)</script>`, "'; DROP TABLE messages; --", strings.Repeat("z", 3000)} {
		html := page("/t/" + id + "?m=" + url.QueryEscape(m))
		if strings.Contains(html, "<script>alert(1)") {
			t.Fatalf("m=%.30q reached the page as markup", m)
		}
		if s := branchText(t, e, id); s != australia {
			t.Fatalf("m=%.30q switched the chat to %q", m, s)
		}
		if s := branchText(t, e, otherID); s != australia {
			t.Fatalf("m=%.30q switched the other chat to %q", m, s)
		}
	}

	// A link from another site opens the chat as it is.
	for _, site := range []string{"cross-site", "same-site"} {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", e.url+"/t/"+id+"?m="+hit, nil)
		req.Header.Set("Sec-Fetch-Site", site)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s := branchText(t, e, id); s != australia {
			t.Fatalf("a %s link switched the chat to %q", site, s)
		}
	}

	html := page("/t/" + id + "?m=" + hit)
	if s := branchText(t, e, id); s != "What is the capital of Austria? | Vienna." {
		t.Fatalf("opening the hit shows %q", s)
	}
	if !strings.Contains(html, "Vienna.") || strings.Contains(html, "Canberra") || !strings.Contains(html, `id="msg-`+hit+`" class="msg msg-assistant status-complete msg-hit"`) {
		t.Fatalf("the page does not show the hit's branch at the hit:\n%s", html)
	}
	if s := branchText(t, e, otherID); s != australia {
		t.Errorf("the other chat changed: %q", s)
	}
	// A message already shown is opened where it is, switching nothing.
	page("/t/" + id + "?m=" + ids["What is the capital of Austria?"])
	if s := branchText(t, e, id); s != "What is the capital of Austria? | Vienna." {
		t.Errorf("opening a message shown switched to %q", s)
	}
}
