package ui_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"parley/agentcore/scripted"
)

// Mastra's messages may carry a user's images and files (the AI SDK's image
// and file parts, base64 or a data: URL): each is checked as a file added
// in the page is, stored with the message, and reaches the model; a URL
// to fetch, bad base64, a lying type or a file from the assistant is a 400
// naming the part.
func TestAPIMessagesWithFiles(t *testing.T) {
	e := newAPIEnv(t)
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(img.Bytes())
	for _, c := range []struct{ part, msg string }{
		{`{"type":"image","image":"https://example.invalid/cat.png"}`, "messages[0]: content[1]: Parley does not fetch https: URLs: send the file's bytes as base64"},
		{`{"type":"image","image":"not base64!"}`, "messages[0]: content[1]: the file's data is not base64"},
		{`{"type":"file","data":"` + base64.StdEncoding.EncodeToString([]byte("<html><script>alert(1)</script>")) + `","mediaType":"image/png","filename":"x.png"}`,
			`messages[0]: content[1]: "x.png" says it is image/png, but its content is text/html.`},
		{`{"type":"file","data":"aGk=","mediaType":"text/plain","filename":"../../x"}`, `messages[0]: content[1]: "../../x" is a path, not a file name.`},
		{`{"type":"video","data":"aGk="}`, `messages[0]: content[1]: part type "video": want text, image or file`},
	} {
		got := e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":[{"type":"text","text":"look"},`+c.part+`]}]}`, http.StatusBadRequest)
		if msg, _ := got["error"].(string); !strings.Contains(msg, c.msg) {
			t.Errorf("%.60s: error %q, want %q", c.part, msg, c.msg)
		}
	}
	got := e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"assistant","content":[{"type":"image","image":"`+b64+`"}]},"hi"]}`, http.StatusBadRequest)
	if msg, _ := got["error"].(string); !strings.Contains(msg, "messages[0]: content[0]: only a user's message may carry image parts") {
		t.Errorf("an assistant's image: %q", msg)
	}

	e.model.Push(scripted.Reply{Text: "A grey square."})
	e.call("POST", "/api/agents/parley/generate", `{"messages":[{"role":"user","content":[{"type":"text","text":"what is it?"},`+
		`{"type":"image","image":"data:image/png;base64,`+b64+`"},{"type":"file","data":"`+base64.StdEncoding.EncodeToString([]byte("x = 1\n"))+`","mediaType":"text/x-python","filename":"a.py"}]}],`+
		`"memory":{"thread":"t-files","resource":"u"}}`, http.StatusOK)
	reqs := e.model.Requests()
	content := gjson.GetBytes(reqs[len(reqs)-1].Body, `messages.#(role=="user")#|@reverse|0.content`)
	if url := content.Get(`#(type=="image_url").image_url.url`).String(); url != "data:image/png;base64,"+b64 {
		t.Errorf("the image reached the model as %.60q", url)
	}
	if text := content.Get("0.text").String(); text != "what is it?\n\n<file name=\"a.py\">\nx = 1\n\n</file>" {
		t.Errorf("the text reached the model as %q", text)
	}
	msgs := e.call("GET", "/api/memory/threads/t-files/messages", "", http.StatusOK)
	parts := gjson.Parse(toJSON(t, msgs)).Get(`messages.0.content.parts.#(type=="file")#`).Array()
	if len(parts) != 2 || parts[0].Get("mimeType").String() != "image/png" || !strings.HasPrefix(parts[0].Get("data").String(), "/files/") ||
		parts[1].Get("filename").String() != "a.py" {
		t.Errorf("the stored message's file parts: %v", parts)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A signal's contents may carry a user's images and files too (Mastra's
// contents as parts): checked, stored with the signal, sent to the model.
func TestAPISignalsWithFiles(t *testing.T) {
	e := newAPIEnv(t)
	th := e.thread()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 7, 3))); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(img.Bytes())
	got := e.call("POST", "/api/agents/parley/send-message", `{"message":[{"type":"text","text":"see"},{"type":"image","image":"ftp://x/y.png"}],"resourceId":"me","threadId":"`+th+`"}`, http.StatusBadRequest)
	if msg, _ := got["error"].(string); !strings.Contains(msg, "Parley does not fetch ftp: URLs") {
		t.Errorf("a URL in a signal: %q", msg)
	}
	e.model.Push(scripted.Reply{Text: "A grey bar."})
	e.call("POST", "/api/agents/parley/send-message", `{"message":{"contents":[{"type":"text","text":"what is this?"},{"type":"image","image":"`+b64+`","mediaType":"image/png"}],"attributes":{"from":"phone"}},"resourceId":"me","threadId":"`+th+`"}`, http.StatusOK)
	deadline := time.Now().Add(5 * time.Second)
	for len(e.model.Requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	reqs := e.model.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[len(reqs)-1].Body), "data:image/png;base64,"+b64) {
		t.Fatalf("the signal's image did not reach the model")
	}
	msgs := e.call("GET", "/api/memory/threads/"+th+"/messages", "", http.StatusOK)
	if parts := gjson.Parse(toJSON(t, msgs)).Get(`messages.#.content.parts.#(type=="file")#`).String(); !strings.Contains(parts, `"mimeType":"image/png"`) {
		t.Errorf("the stored signal's file parts: %s", parts)
	}
}
