package ui

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"parley/agentcore"
	"parley/agentcore/llm"
	"parley/app/attach"
	"parley/app/chat"
)

// runBody is the part of Mastra's agentExecutionBodySchema that Parley uses,
// plus the legacy threadId/resourceId of generate-legacy.
type runBody struct {
	Messages json.RawMessage `json:"messages"`
	Memory   *struct {
		Thread   threadRef `json:"thread"`
		Resource string    `json:"resource"`
	} `json:"memory"`
	ThreadID   string `json:"threadId"`
	ResourceID string `json:"resourceId"`
	RunID      string `json:"runId"`
	Model      string `json:"model"`
	// Run options, as Mastra's AgentExecutionOptions name them.
	MaxSteps        *int            `json:"maxSteps"`
	ToolChoice      json.RawMessage `json:"toolChoice"`
	ActiveTools     []string        `json:"activeTools"`
	Instructions    json.RawMessage `json:"instructions"`
	ModelSettings   json.RawMessage `json:"modelSettings"`
	ProviderOptions json.RawMessage `json:"providerOptions"`
}

// maxRunSteps bounds maxSteps from a client.
const maxRunSteps = 100

// options are the run options the body asks for, checked against agent's
// tools: a bad one is a 400 naming it.
func (b runBody) options(agent *agentcore.Agent) (agentcore.RunOptions, error) {
	var o agentcore.RunOptions
	if b.MaxSteps != nil {
		if *b.MaxSteps < 1 || *b.MaxSteps > maxRunSteps {
			return o, badRequest("maxSteps must be between 1 and %d, not %d", maxRunSteps, *b.MaxSteps)
		}
		o.MaxSteps = *b.MaxSteps
	}
	tools := agent.ToolSet()
	if len(b.ToolChoice) > 0 && string(b.ToolChoice) != "null" {
		var mode string
		var named struct {
			Type     string `json:"type"`
			ToolName string `json:"toolName"`
		}
		switch {
		case json.Unmarshal(b.ToolChoice, &mode) == nil && (mode == "auto" || mode == "none" || mode == "required"):
			o.ToolChoice = agentcore.ToolChoice(mode)
		case json.Unmarshal(b.ToolChoice, &named) == nil && named.Type == "tool" && tools[named.ToolName] != nil:
			o.ToolChoice = agentcore.ToolChoice(named.ToolName)
		case named.Type == "tool":
			return o, badRequest("toolChoice names %q, which is not one of the agent's tools", named.ToolName)
		default:
			return o, badRequest(`toolChoice must be "auto", "none", "required" or {"type": "tool", "toolName": …}`)
		}
	}
	if b.ActiveTools != nil {
		for _, n := range b.ActiveTools {
			if tools[n] == nil {
				return o, badRequest("activeTools names %q, which is not one of the agent's tools", n)
			}
		}
		o.ActiveTools = slices.Clone(b.ActiveTools)
	}
	if len(b.Instructions) > 0 && string(b.Instructions) != "null" {
		in, err := instructionsOf(b.Instructions)
		if err != nil {
			return o, err
		}
		o.Instructions = in
	}
	if len(b.ModelSettings) > 0 && string(b.ModelSettings) != "null" {
		if err := modelSettingsOf(b.ModelSettings, &o); err != nil {
			return o, err
		}
	}
	if len(b.ProviderOptions) > 0 && string(b.ProviderOptions) != "null" {
		po, err := providerOptionsOf(b.ProviderOptions)
		if err != nil {
			return o, err
		}
		o.ProviderOptions = po
	}
	return o, nil
}

// instructionsOf reads Mastra's instructions option (its SystemMessage type,
// @mastra/core dist/llm/index.d.ts): a string, a list of strings, a system
// message {role: "system", content: string, providerOptions?} (the AI
// SDK's SystemModelMessage; Mastra's systemToV4Core refuses other content)
// or a list of them. An empty string is no instructions, as Mastra's
// `options.instructions || agent's` takes it. A system message's
// providerOptions are read as a message's (messageOptionsOf).
func instructionsOf(raw json.RawMessage) (agentcore.Instructions, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return agentcore.Text(s), nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		m, err := systemMessageOf("instructions", raw)
		if err != nil {
			return nil, err
		}
		return agentcore.Instructions{m}, nil
	}
	out := make(agentcore.Instructions, 0, len(list))
	for i, item := range list {
		if string(item) != "null" && json.Unmarshal(item, &s) == nil {
			out = append(out, agentcore.SystemMessage{Role: "system", Content: s})
			continue
		}
		m, err := systemMessageOf(fmt.Sprintf("instructions[%d]", i), item)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// systemMessageOf reads {role: "system", content, providerOptions?} at
// path; a wrong shape is a 400 naming path.
func systemMessageOf(path string, raw json.RawMessage) (agentcore.SystemMessage, error) {
	var m struct {
		Role            json.RawMessage `json:"role"`
		Content         json.RawMessage `json:"content"`
		ProviderOptions json.RawMessage `json:"providerOptions"`
	}
	var role, content string
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &m) != nil {
		if path == "instructions" {
			return agentcore.SystemMessage{}, badRequest(`instructions must be a string, {"role": "system", "content": "…"} or a list of them`)
		}
		return agentcore.SystemMessage{}, badRequest(`%s must be a string or {"role": "system", "content": "…"}`, path)
	}
	if json.Unmarshal(m.Role, &role) != nil || role != "system" {
		got := "nothing"
		if len(m.Role) > 0 {
			got = clipKey(string(m.Role))
		}
		return agentcore.SystemMessage{}, badRequest(`%s.role must be "system", not %s`, path, got)
	}
	if json.Unmarshal(m.Content, &content) != nil {
		return agentcore.SystemMessage{}, badRequest("%s.content must be a string", path)
	}
	opts, err := messageOptionsOf(path+".providerOptions", m.ProviderOptions)
	if err != nil {
		return agentcore.SystemMessage{}, err
	}
	return agentcore.SystemMessage{Role: "system", Content: content, ProviderOptions: opts}, nil
}

// messageOptionsOf reads the providerOptions of one message or system
// instruction at path, as the AI SDK passes them to the provider: for
// Anthropic, cacheControl {type: "ephemeral"} puts a cache breakpoint
// after the message (llm's markCache places it before Parley's own), false
// none; that is the one per-message option fantasy carries. Other
// providers and other keys are ignored, as the AI SDK's schemas strip
// them; a known key of the wrong type is a 400 naming its path. nil: no
// options.
func messageOptionsOf(path string, raw json.RawMessage) (*agentcore.MessageOptions, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var byProvider map[string]json.RawMessage
	if json.Unmarshal(raw, &byProvider) != nil || byProvider == nil {
		return nil, badRequest("%s must be an object of provider names", path)
	}
	a, ok := byProvider["anthropic"]
	if !ok || string(a) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(a, &m) != nil || m == nil {
		return nil, badRequest("%s.anthropic must be an object", path)
	}
	v := m["cacheControl"]
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	on, err := cacheControlOf(path+".anthropic.cacheControl", v)
	if err != nil || !on {
		return nil, err
	}
	return &agentcore.MessageOptions{Anthropic: &agentcore.AnthropicMessageOptions{CacheControl: &agentcore.CacheControl{Type: "ephemeral"}}}, nil
}

// cacheControlOf reads Anthropic's cacheControl at path: {type:
// "ephemeral"} is on, false off.
func cacheControlOf(path string, v json.RawMessage) (bool, error) {
	var off bool
	var cc struct {
		Type string          `json:"type"`
		TTL  json.RawMessage `json:"ttl"`
	}
	switch {
	case json.Unmarshal(v, &off) == nil && !off:
		return false, nil
	case json.Unmarshal(v, &cc) == nil && cc.Type == "ephemeral" && (len(cc.TTL) == 0 || string(cc.TTL) == "null"):
		return true, nil
	case cc.Type == "ephemeral":
		return false, badRequest("%s.ttl is not supported: Parley's breakpoints use the 5-minute cache", path)
	}
	return false, badRequest(`%s must be {"type": "ephemeral"} or false`, path)
}

// clipKey shortens a client's key for an error message.
func clipKey(k string) string {
	if r := []rune(k); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return k
}

// Bounds of the provider options a client may set.
const (
	// Anthropic's least thinking budget is 1,024 tokens; 128k is the
	// most any Claude model writes in one answer.
	minThinkingBudget, maxThinkingBudget = 1_024, 128_000
	// Gemini's budgets run to 32,768 (2.5 Pro); -1 is dynamic.
	maxGeminiBudget = 32_768
	// maxCacheKey bounds a caller's prompt_cache_key.
	maxCacheKey = 256
)

// providerOptionsOf reads Mastra's providerOptions for a call: per
// provider, the options Parley passes on (anthropic.cacheControl,
// anthropic.thinking, anthropic.sendReasoning, openai.reasoningEffort,
// openai.promptCacheKey, google.thinkingConfig). Other providers and other
// keys are ignored, as the AI SDK's option schemas strip them; a known key
// of the wrong type or out of bounds is a 400 naming it.
func providerOptionsOf(raw json.RawMessage) (llm.ProviderOptions, error) {
	var po llm.ProviderOptions
	var byProvider map[string]json.RawMessage
	if json.Unmarshal(raw, &byProvider) != nil || byProvider == nil {
		return po, badRequest("providerOptions must be an object of provider names")
	}
	object := func(name string, raw json.RawMessage) (map[string]json.RawMessage, error) {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return nil, badRequest("%s must be an object", name)
		}
		return m, nil
	}
	present := func(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }
	if raw, ok := byProvider["anthropic"]; ok && present(raw) {
		m, err := object("providerOptions.anthropic", raw)
		if err != nil {
			return po, err
		}
		var a llm.AnthropicOptions
		if v := m["cacheControl"]; present(v) {
			on, err := cacheControlOf("providerOptions.anthropic.cacheControl", v)
			if err != nil {
				return po, err
			}
			a.NoCache = !on // on: Parley's default, breakpoints on
		}
		if v := m["thinking"]; present(v) {
			var th struct {
				Type         string `json:"type"`
				BudgetTokens *int64 `json:"budgetTokens"`
			}
			if json.Unmarshal(v, &th) != nil || (th.Type != "enabled" && th.Type != "disabled") {
				return po, badRequest(`providerOptions.anthropic.thinking must be {"type": "enabled", "budgetTokens": n} or {"type": "disabled"}`)
			}
			if th.Type == "enabled" {
				if th.BudgetTokens == nil || *th.BudgetTokens < minThinkingBudget || *th.BudgetTokens > maxThinkingBudget {
					return po, badRequest("providerOptions.anthropic.thinking.budgetTokens must be a whole number from %d to %d", minThinkingBudget, maxThinkingBudget)
				}
				a.ThinkingBudget = *th.BudgetTokens
			}
		}
		if v := m["sendReasoning"]; present(v) {
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return po, badRequest("providerOptions.anthropic.sendReasoning must be true or false")
			}
			a.SendReasoning = &b
		}
		po.Anthropic = &a
	}
	if raw, ok := byProvider["openai"]; ok && present(raw) {
		m, err := object("providerOptions.openai", raw)
		if err != nil {
			return po, err
		}
		var o llm.OpenAIOptions
		if v := m["reasoningEffort"]; present(v) {
			var e string
			if json.Unmarshal(v, &e) != nil || !slices.Contains([]string{"none", "minimal", "low", "medium", "high", "xhigh"}, e) {
				return po, badRequest(`providerOptions.openai.reasoningEffort must be "none", "minimal", "low", "medium", "high" or "xhigh"`)
			}
			o.ReasoningEffort = e
		}
		if v := m["promptCacheKey"]; present(v) {
			var k string
			if json.Unmarshal(v, &k) != nil || k == "" || len(k) > maxCacheKey {
				return po, badRequest("providerOptions.openai.promptCacheKey must be a string of 1 to %d bytes", maxCacheKey)
			}
			o.PromptCacheKey = k
		}
		po.OpenAI = &o
	}
	if raw, ok := byProvider["google"]; ok && present(raw) {
		m, err := object("providerOptions.google", raw)
		if err != nil {
			return po, err
		}
		var g llm.GoogleOptions
		if v := m["thinkingConfig"]; present(v) {
			tc, err := object("providerOptions.google.thinkingConfig", v)
			if err != nil {
				return po, err
			}
			if v := tc["thinkingBudget"]; present(v) {
				var n int64
				if json.Unmarshal(v, &n) != nil || n < -1 || n > maxGeminiBudget {
					return po, badRequest("providerOptions.google.thinkingConfig.thinkingBudget must be a whole number from -1 to %d", maxGeminiBudget)
				}
				g.ThinkingBudget = &n
			}
			if v := tc["includeThoughts"]; present(v) {
				var b bool
				if json.Unmarshal(v, &b) != nil {
					return po, badRequest("providerOptions.google.thinkingConfig.includeThoughts must be true or false")
				}
				g.IncludeThoughts = &b
			}
			if v := tc["thinkingLevel"]; present(v) {
				var l string
				if json.Unmarshal(v, &l) != nil || !slices.Contains([]string{"minimal", "low", "medium", "high"}, strings.ToLower(l)) {
					return po, badRequest(`providerOptions.google.thinkingConfig.thinkingLevel must be "minimal", "low", "medium" or "high"`)
				}
				g.ThinkingLevel = l
			}
		}
		po.Google = &g
	}
	return po, nil
}

// modelSettingsOf takes the model settings Parley can pass on; any other
// is a 400 naming it, rather than silently not applied.
func modelSettingsOf(raw json.RawMessage, o *agentcore.RunOptions) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return badRequest("modelSettings must be an object")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "temperature":
			var t float64
			if json.Unmarshal(v, &t) != nil || t < 0 || t > 2 {
				return badRequest("modelSettings.temperature must be a number from 0 to 2")
			}
			o.Temperature = &t
		case "maxOutputTokens":
			var n int64
			if json.Unmarshal(v, &n) != nil || n < 1 || n > 1_000_000 {
				return badRequest("modelSettings.maxOutputTokens must be a whole number from 1 to 1000000")
			}
			o.MaxOutputTokens = n
		case "topP":
			var p float64
			if json.Unmarshal(v, &p) != nil || p < 0 || p > 1 {
				return badRequest("modelSettings.topP must be a number from 0 to 1")
			}
			o.TopP = &p
		default:
			return badRequest("modelSettings.%s is not supported: Parley passes on temperature, maxOutputTokens and topP", clipKey(k))
		}
	}
	return nil
}

// thread is the thread and resource the run is remembered in ("": none).
func (b runBody) thread() (threadID, resourceID string) {
	if b.Memory != nil {
		return string(b.Memory.Thread), cmp.Or(b.Memory.Resource, b.ResourceID)
	}
	return b.ThreadID, b.ResourceID
}

// threadRef is memory.thread: an id, or an object with one.
type threadRef string

func (t *threadRef) UnmarshalJSON(b []byte) error {
	var id string
	if err := json.Unmarshal(b, &id); err == nil {
		*t = threadRef(id)
		return nil
	}
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return errors.New(`memory.thread must be a thread id or {"id": …}`)
	}
	*t = threadRef(o.ID)
	return nil
}

var errNoMessages = badRequest(`Argument "messages" is required`)

// maxRunBody bounds a generate or stream request: its messages may carry a
// message's worth of files, as base64.
const maxRunBody = maxAPIBody + attach.MaxMessageBytes*4/3

// parsed is an input message as read, with the files its parts carried
// (not stored yet: storeFiles).
type parsed struct {
	agentcore.Message
	files []attach.File
}

// parseMessages reads Mastra's messages: a string, a list of strings, or a
// list of {role, content} whose content is a string or a list of parts:
// text, and a user's images and files (the AI SDK's {type: "image", image,
// mediaType} and {type: "file", data, mediaType, filename}, the bytes as
// base64 or a data: URL), each checked as a file attached in the page is.
func parseMessages(raw json.RawMessage) ([]parsed, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errNoMessages
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []json.RawMessage{raw}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, badRequest("messages must be a string, a list of strings or a list of {role, content}")
		}
		if strings.TrimSpace(s) == "" {
			return nil, errNoMessages
		}
	}
	if len(list) == 0 {
		return nil, errNoMessages
	}
	out := make([]parsed, 0, len(list))
	var sizes []int64
	for i, item := range list {
		m, err := parseMessage(item)
		if err != nil {
			return nil, badRequest("messages[%d]: %v", i, err)
		}
		if m.Content.ProviderMetadata, err = inputMessageOptions(i, item); err != nil {
			return nil, err
		}
		for _, f := range m.files {
			sizes = append(sizes, int64(len(f.Data)))
		}
		out = append(out, m)
	}
	if err := attach.CheckMessage(sizes); err != nil {
		return nil, badRequest("messages: %s", refusal(err))
	}
	return out, nil
}

// inputMessageOptions reads messages[i].providerOptions (messageOptionsOf).
// Mastra keeps them with the stored message: AIV5Adapter.fromModelMessage
// sets content.providerMetadata from a model message's providerOptions, and
// aiV5UIMessagesToAIV5ModelMessages gives them back as the message's
// providerOptions whenever the thread is sent again (@mastra/core 1.71
// dist/message-list-*.js, src/agent/message-list/adapters/AIV5Adapter.ts and
// conversion/output-converter.ts). Parley does the same: they are stored as
// the message's Content.ProviderMetadata, so a breakpoint stays on it in
// later requests of the thread.
func inputMessageOptions(i int, raw json.RawMessage) (*agentcore.MessageOptions, error) {
	var m struct {
		ProviderOptions json.RawMessage `json:"providerOptions"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil, nil // a string: no options
	}
	return messageOptionsOf(fmt.Sprintf("messages[%d].providerOptions", i), m.ProviderOptions)
}

func parseMessage(raw json.RawMessage) (parsed, error) {
	var text string
	var files []attach.File
	role := agentcore.RoleUser
	if err := json.Unmarshal(raw, &text); err != nil {
		var m struct {
			Role    agentcore.Role  `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return parsed{}, errors.New("want a string or {role, content}")
		}
		switch m.Role {
		case agentcore.RoleUser, agentcore.RoleAssistant, agentcore.RoleSystem:
		default:
			return parsed{}, fmt.Errorf("role %q: want user, assistant or system", m.Role)
		}
		if text, files, err = contentParts(m.Content, m.Role == agentcore.RoleUser); err != nil {
			return parsed{}, err
		}
		role = m.Role
	}
	if strings.TrimSpace(text) == "" && len(files) == 0 {
		return parsed{}, errors.New("the message has no text")
	}
	return parsed{Message: agentcore.Message{Role: role, Content: agentcore.TextContent(text)}, files: files}, nil
}

// contentParts reads a message's content: its text, and the files of a
// user's message.
func contentParts(raw json.RawMessage, user bool) (string, []attach.File, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var parts []inputPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, errors.New("content must be a string or a list of parts")
	}
	var b strings.Builder
	var files []attach.File
	for i, p := range parts {
		switch {
		case p.Type == "text":
			b.WriteString(p.Text)
		case (p.Type == "image" || p.Type == "file") && user:
			f, err := p.file()
			if err != nil {
				return "", nil, fmt.Errorf("content[%d]: %v", i, err)
			}
			files = append(files, f)
		case p.Type == "image" || p.Type == "file":
			return "", nil, fmt.Errorf("content[%d]: only a user's message may carry %s parts", i, p.Type)
		default:
			return "", nil, fmt.Errorf("content[%d]: part type %q: want text, image or file", i, p.Type)
		}
	}
	return b.String(), files, nil
}

// inputPart is a part of an input message as the AI SDK writes it.
type inputPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Image     string `json:"image"`
	Data      string `json:"data"`
	MediaType string `json:"mediaType"`
	MimeType  string `json:"mimeType"` // the AI SDK's older name
	Filename  string `json:"filename"`
}

// file reads an image or file part's bytes and checks them as a file
// attached in the page is.
func (p inputPart) file() (attach.File, error) {
	data, name := cmp.Or(p.Image, p.Data), cmp.Or(p.Filename, p.Type)
	bytes, declared, err := partBytes(data, cmp.Or(p.MediaType, p.MimeType))
	if err != nil {
		return attach.File{}, err
	}
	f, err := attach.Check(name, declared, bytes)
	if err != nil {
		return attach.File{}, errors.New(refusal(err))
	}
	return f, nil
}

// partBytes decodes a part's bytes, given as a data: URL or as base64, and
// the type it declares (the URL's, else declared). Parley fetches nothing:
// a URL of another scheme is refused.
func partBytes(data, declared string) ([]byte, string, error) {
	if rest, ok := strings.CutPrefix(data, "data:"); ok {
		meta, payload, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, "", errors.New("a data: URL must be base64 (data:<type>;base64,<bytes>)")
		}
		data, declared = payload, cmp.Or(strings.TrimSuffix(meta, ";base64"), declared)
	} else if u, err := url.Parse(data); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return nil, "", fmt.Errorf("Parley does not fetch %s: URLs: send the file's bytes as base64", u.Scheme)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, "", fmt.Errorf("the file's data is not base64: %v", err)
	}
	return b, declared, nil
}

// storeFiles stores the files of the input messages and gives each message
// its file parts after its text.
func (s *Server) storeFiles(ctx context.Context, msgs []parsed) ([]agentcore.Message, error) {
	out := make([]agentcore.Message, len(msgs))
	for i, m := range msgs {
		parts, err := s.storeFileParts(ctx, m.files)
		if err != nil {
			return nil, err
		}
		m.Content.Parts = append(m.Content.Parts, parts...)
		out[i] = m.Message
	}
	return out, nil
}

// storeFileParts stores checked files and returns their file parts.
func (s *Server) storeFileParts(ctx context.Context, files []attach.File) ([]agentcore.Part, error) {
	var parts []agentcore.Part
	for _, f := range files {
		ref, err := s.rt.PutFile(ctx, f.MediaType, f.Data)
		if err != nil {
			return nil, fmt.Errorf("store the file %q: %w", f.Name, err)
		}
		parts = append(parts, agentcore.Part{Type: "file", Data: agentcore.FileURL(ref),
			MimeType: f.MediaType, Filename: f.Name, Size: int64(len(f.Data))})
	}
	return parts, nil
}

// apiRun is a run started for the API. Its events come in order and end
// with one terminal event, unless the request or the server ends first.
type apiRun struct {
	id        string
	messageID string // the reply being written on the thread; "" without one
	events    iter.Seq[agentcore.Event]
	close     func()
	// agentID and tools are the run's agent's: its id for the start
	// chunk, its tools for the resume schema of a suspended call ("" and
	// nil: not known, not sent).
	agentID string
	tools   map[string]*agentcore.Tool

	// What the chunks so far have opened: the text and reasoning parts
	// of the step, and the arguments of each call (a result repeats them).
	textOpen, reasoningOpen bool
	args                    map[string]json.RawMessage
}

// startRun starts the run a generate or stream request asks for. With a
// thread, the messages are stored and the run belongs to the thread: it goes
// on if the client leaves. Without one, nothing is stored and the run ends
// with the request.
func (s *Server) startRun(r *http.Request) (*apiRun, error) {
	var b runBody
	if err := decodeBodyUpTo(r, &b, maxRunBody); err != nil {
		return nil, err
	}
	input, err := parseMessages(b.Messages)
	if err != nil {
		return nil, err
	}
	msgs, err := s.storeFiles(r.Context(), input)
	if err != nil {
		return nil, err
	}
	agent, err := s.apiAgentIn(r.Context(), r.PathValue("agentId"))
	if err != nil {
		return nil, err
	}
	if b.Model != "" {
		if err := s.cfg.CheckModel(b.Model); err != nil {
			return nil, badRequest("model %s cannot be used: %v", b.Model, err)
		}
	}
	options, err := b.options(agent)
	if err != nil {
		return nil, err
	}
	threadID, resourceID := b.thread()
	if b.Memory != nil && threadID == "" {
		return nil, badRequest("memory.thread is required")
	}
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.ctx, cancel) // server shutdown ends the request
	done := func() { stop(); cancel() }
	if threadID == "" {
		runID := cmp.Or(b.RunID, agentcore.NewID())
		opts := agentcore.StreamOptions{Model: b.Model, RunID: runID,
			MaxSteps: options.MaxSteps, ToolChoice: options.ToolChoice, ActiveTools: options.ActiveTools,
			AgentInstructions: options.Instructions, Temperature: options.Temperature, MaxOutputTokens: options.MaxOutputTokens,
			TopP: options.TopP, ProviderOptions: options.ProviderOptions, Files: s.rt}
		events := agent.Stream(ctx, msgs, opts)
		return &apiRun{id: runID, events: events, close: done, agentID: agent.ID, tools: agent.ToolSet()}, nil
	}
	run, err := s.startOnThread(ctx, agent, threadID, resourceID, b.Model, msgs, options)
	if err != nil {
		done()
		return nil, err
	}
	closeSub := run.close
	run.close = func() { closeSub(); done() }
	run.agentID, run.tools = agent.ID, agent.ToolSet()
	return run, nil
}

func (s *Server) startOnThread(ctx context.Context, agent *agentcore.Agent, threadID, resourceID, model string, msgs []agentcore.Message, options agentcore.RunOptions) (*apiRun, error) {
	last := msgs[len(msgs)-1]
	if last.Role != agentcore.RoleUser {
		return nil, badRequest("messages: the last message must be the user's (role user)")
	}
	t, err := s.rt.GetThread(ctx, threadID)
	switch {
	case errors.Is(err, agentcore.ErrNotFound):
		// Mastra creates the thread on first use.
		if resourceID == "" {
			return nil, badRequest("A resource ID is required when using memory. Provide memory.resource in the request body.")
		}
		if err := checkThreadID(threadID); err != nil {
			return nil, err
		}
		var meta map[string]any
		if own := s.ownAgent(agent); own != "" {
			// One of the user's agents: the chat is its, from its mode and model.
			settings, serr := s.cfg.Agents.NewChat(ctx, own)
			if serr != nil {
				return nil, serr
			}
			meta = chat.Metadata(settings)
		}
		t, err = s.rt.CreateThread(ctx, agentcore.Thread{ID: threadID, ResourceID: resourceID, Metadata: meta})
	case err == nil && resourceID != "" && t.ResourceID != resourceID:
		err = errOtherResource
	case err == nil && chat.Of(t).Agent != s.ownAgent(agent):
		// The agent named runs the thread from now on, as in Mastra any
		// agent may answer in a thread.
		own := s.ownAgent(agent)
		_, err = chat.New(s.rt).Update(ctx, t.ID, func(st *chat.Settings) error { st.Agent = own; return nil })
	}
	if err != nil {
		return nil, err
	}
	// The user's agents run as the built-in one, prepared from the chat.
	agentID := agent.ID
	if s.ownAgent(agent) != "" {
		agentID = ""
	}
	// Subscribed before anything is written: no event of the run is missed.
	sub := s.rt.Subscribe(t.ID)
	// Mastra keeps every input message; the last one starts the run.
	var files []agentcore.Part
	for _, p := range last.Content.Parts {
		if _, ok := p.FileRef(); ok {
			files = append(files, p)
		}
	}
	sent, err := s.rt.Send(ctx, agentcore.SendRequest{ThreadID: t.ID, AgentID: agentID, Text: last.Content.Text(), Files: files,
		Model: model, Earlier: msgs[:len(msgs)-1], Options: options, ProviderOptions: last.Content.ProviderMetadata})
	if err != nil {
		sub.Close()
		return nil, err
	}
	return &apiRun{id: sent.Run.ID, messageID: sent.MessageID, events: runEvents(ctx, sub, sent.Run.ID), close: sub.Close}, nil
}

// runEvents yields the events of one run from a thread subscription, up to
// and including its terminal event.
func runEvents(ctx context.Context, sub *agentcore.Subscription, runID string) iter.Seq[agentcore.Event] {
	return func(yield func(agentcore.Event) bool) {
		for {
			for _, e := range sub.Drain() {
				if e.RunID != runID || e.Type == agentcore.EventMessage {
					continue
				}
				if !yield(e) || e.Terminal() {
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-sub.Ready():
			}
		}
	}
}

// generateResult is the meaningful part of Mastra's generate output
// (FullOutput); tool calls and results are their stream chunks.
type generateResult struct {
	Text          string          `json:"text"`
	ReasoningText string          `json:"reasoningText,omitempty"`
	FinishReason  string          `json:"finishReason"`
	Usage         agentcore.Usage `json:"usage"`
	TotalUsage    agentcore.Usage `json:"totalUsage"`
	ToolCalls     []any           `json:"toolCalls"`
	ToolResults   []any           `json:"toolResults"`
	RunID         string          `json:"runId"`
	Response      struct {
		ID        string    `json:"id"` // the stored reply's id on a thread, else the run's
		ModelID   string    `json:"modelId"`
		Timestamp time.Time `json:"timestamp"`
	} `json:"response"`
}

// apiGenerate answers POST /api/agents/:id/generate once the run is over.
func (s *Server) apiGenerate(r *http.Request) (any, error) {
	run, err := s.startRun(r)
	if err != nil {
		return nil, err
	}
	defer run.close()
	return s.collect(r, run)
}

// collect follows a run to its end and answers with Mastra's generate output.
func (s *Server) collect(r *http.Request, run *apiRun) (any, error) {
	var text, reasoning strings.Builder
	var start, end agentcore.Event
	calls, results := []any{}, []any{}
	for e := range run.events {
		switch e.Type {
		case agentcore.EventStart:
			start = e
		case agentcore.EventTextDelta:
			text.WriteString(e.Text)
		case agentcore.EventReasoningDelta:
			reasoning.WriteString(e.Text)
		case agentcore.EventToolCall, agentcore.EventToolResult, agentcore.EventToolSuspended:
			if c, ok := run.chunk(e); ok {
				if e.Type == agentcore.EventToolCall {
					calls = append(calls, c)
				} else {
					results = append(results, c)
				}
			}
		}
		if e.Terminal() {
			end = e
		}
	}
	switch {
	case end.Type == "" && r.Context().Err() != nil:
		return nil, r.Context().Err()
	case end.Type == "":
		return nil, &apiError{http.StatusServiceUnavailable, "Parley is shutting down"}
	case end.Type == agentcore.EventError && end.StoreFailed:
		return nil, &apiError{http.StatusInternalServerError, end.Error} // Parley's own store, not the model
	case end.Type == agentcore.EventError && start.Type == "":
		return nil, errors.New(end.Error) // the model could not be opened
	case end.Type == agentcore.EventError:
		return nil, &apiError{http.StatusBadGateway, end.Error}
	}
	out := generateResult{
		Text: text.String(), ReasoningText: reasoning.String(), FinishReason: end.FinishReason,
		Usage: end.Usage, TotalUsage: end.Usage, ToolCalls: calls, ToolResults: results, RunID: run.id,
	}
	if end.Type == agentcore.EventAbort {
		out.FinishReason = "abort" // stopped (from the UI, or by a shutdown)
	}
	out.Response.ID = cmp.Or(run.messageID, run.id)
	_, out.Response.ModelID = splitModel(start.Model)
	out.Response.Timestamp = time.Now().UTC()
	return out, nil
}

// chunk is one chunk of Mastra's agent fullStream (AgentChunkType).
type chunk struct {
	Type    string `json:"type"`
	RunID   string `json:"runId"`
	From    string `json:"from"`
	Payload any    `json:"payload"`
	// Data and Transient: a data part (the echo of a signal).
	Data      any  `json:"data,omitempty"`
	Transient bool `json:"transient,omitempty"`
}

// chunk turns a run event into Mastra's chunk; thread-level events have
// none. For the stream, chunks also opens and closes text parts.
func (run *apiRun) chunk(e agentcore.Event) (chunk, bool) {
	c := chunk{Type: string(e.Type), RunID: run.id, From: "AGENT"}
	partID := cmp.Or(run.messageID, run.id)
	switch e.Type {
	case agentcore.EventStart:
		p := map[string]string{}
		if run.messageID != "" {
			p["messageId"] = run.messageID
		}
		if run.agentID != "" {
			p["id"] = run.agentID
		}
		c.Payload = p
	case agentcore.EventTextDelta, agentcore.EventReasoningDelta:
		c.Payload = map[string]string{"id": partID, "text": e.Text}
	case agentcore.EventStepStart:
		c.Payload = map[string]any{"stepNumber": e.Step, "messageId": partID, "warnings": []any{}, "startedAt": time.Now().UnixMilli()}
	case agentcore.EventToolInputStart:
		c.Payload = map[string]string{"toolCallId": e.ToolCallID, "toolName": e.ToolName}
	case agentcore.EventToolCallDelta:
		c.Payload = map[string]string{"toolCallId": e.ToolCallID, "toolName": e.ToolName, "argsTextDelta": e.Text}
	case agentcore.EventToolInputEnd:
		c.Payload = map[string]string{"toolCallId": e.ToolCallID}
	case agentcore.EventToolCall:
		if run.args == nil {
			run.args = map[string]json.RawMessage{}
		}
		run.args[e.ToolCallID] = e.Args
		c.Payload = map[string]any{"toolCallId": e.ToolCallID, "toolName": e.ToolName, "args": e.Args}
	case agentcore.EventToolOutput:
		c.Payload = map[string]any{"toolCallId": e.ToolCallID, "toolName": e.ToolName, "output": e.Text}
	case agentcore.EventToolResult:
		p := map[string]any{"toolCallId": e.ToolCallID, "toolName": e.ToolName, "result": e.Result}
		if args, ok := run.args[e.ToolCallID]; ok {
			p["args"] = args
		}
		if e.IsError { // Mastra says so only of a failure
			p["isError"] = true
		}
		c.Payload = p
	case agentcore.EventToolSuspended:
		p := map[string]any{"toolCallId": e.ToolCallID, "toolName": e.ToolName, "args": e.Args, "suspendPayload": e.Result}
		if t := run.tools[e.ToolName]; t != nil && len(t.ResumeSchema) > 0 {
			p["resumeSchema"] = draft07(t.ResumeSchema)
		}
		c.Payload = p
	case agentcore.EventToolApproval:
		c.Payload = map[string]any{"toolCallId": e.ToolCallID, "toolName": e.ToolName, "args": e.Args, "resumeSchema": approvalResumeSchema}
	case agentcore.EventStepFinish, agentcore.EventFinish:
		result := map[string]any{"reason": e.FinishReason}
		if e.Type == agentcore.EventStepFinish {
			result["isContinued"] = e.FinishReason == "tool-calls"
		}
		c.Payload = map[string]any{"messageId": partID, "stepResult": result, "output": map[string]any{"usage": e.Usage}, "processorRetryCount": 0}
	case agentcore.EventError:
		c.Payload = map[string]any{"error": map[string]string{"name": "Error", "message": e.Error}}
	case agentcore.EventAbort:
		c.Payload = map[string]string{}
	case agentcore.EventDataSignal, agentcore.EventDataUserMessage:
		if e.Signal == nil {
			return c, false
		}
		c.Data, c.Transient = e.Signal, true
	default:
		return c, false
	}
	return c, true
}

// chunks are the stream's chunks for e: its own, after a text-start or
// reasoning-start before a part's first delta and a text-end or
// reasoning-end once the part is over (the step's calls close, or it ends;
// a stopped or failed run just ends), as Mastra's stream brackets its parts.
func (run *apiRun) chunks(e agentcore.Event) []chunk {
	c, ok := run.chunk(e)
	if !ok {
		return nil
	}
	var out []chunk
	bracket := func(kind string) chunk {
		id := cmp.Or(run.messageID, run.id)
		p := map[string]string{"id": id}
		if strings.HasSuffix(kind, "-end") {
			p["type"] = kind
		}
		return chunk{Type: kind, RunID: run.id, From: "AGENT", Payload: p}
	}
	switch e.Type {
	case agentcore.EventTextDelta:
		if !run.textOpen {
			run.textOpen = true
			out = append(out, bracket("text-start"))
		}
	case agentcore.EventReasoningDelta:
		if !run.reasoningOpen {
			run.reasoningOpen = true
			out = append(out, bracket("reasoning-start"))
		}
	case agentcore.EventToolInputEnd, agentcore.EventToolCall, agentcore.EventStepFinish, agentcore.EventFinish:
		if run.reasoningOpen {
			run.reasoningOpen = false
			out = append(out, bracket("reasoning-end"))
		}
		if run.textOpen {
			run.textOpen = false
			out = append(out, bracket("text-end"))
		}
	}
	return append(out, c)
}

// draft07 is schema as Mastra's stream sends a resume schema: a string of
// JSON Schema led by its draft-07 "$schema".
func draft07(schema json.RawMessage) string {
	body := strings.TrimSpace(string(schema))
	if !strings.HasPrefix(body, "{") || strings.Contains(body, schemaKey) {
		return body
	}
	if rest := strings.TrimSpace(body[1:]); rest == "}" {
		return draft07Lead + "}"
	}
	return draft07Lead + "," + body[1:]
}

// The JSON Schema dialect tag Mastra puts first in a resume schema.
const (
	schemaKey   = `"$schema"`
	draft07Lead = `{"$schema":"http://json-schema.org/draft-07/schema#"`
)

// approvalResumeSchema is the resumeSchema of Mastra's tool-call-approval
// chunk: the JSON Schema of its approval answer, as a string. Parley's API
// takes that answer on approve-tool-call and decline-tool-call.
const approvalResumeSchema = `{"type":"object","properties":{"approved":{"type":"boolean","description":"Controls if the tool call is approved or not, should be true when approved and false when declined"},"reason":{"type":"string","description":"Optional explanation for the decision, surfaced to the model when the tool call is declined"}},"required":["approved"],"additionalProperties":false}`

// apiStream answers POST /api/agents/:id/stream as Mastra's server does: SSE
// lines "data: <chunk json>", every delta in order, then "data: [DONE]".
func (s *Server) apiStream(w http.ResponseWriter, r *http.Request) {
	run, err := s.startRun(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	defer run.close()
	s.writeChunks(w, run)
}

// writeChunks writes a run's events as Mastra's SSE stream.
func (s *Server) writeChunks(rw http.ResponseWriter, run *apiRun) {
	w := s.streamWriter(rw)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, apiWriteChunk)
	for e := range run.events {
		for _, c := range run.chunks(e) {
			if err := writeChunk(bw, c, apiSpliceFrom); err != nil {
				s.log.Error("encode stream chunk", "type", c.Type, "err", err)
			}
		}
		if bw.Flush() != nil {
			return // the client is gone; a run on a thread goes on
		}
		_ = rc.Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// resumeBody is Mastra's resume-stream body.
type resumeBody struct {
	ResumeData json.RawMessage `json:"resumeData"`
	RunID      string          `json:"runId"`
	ToolCallID string          `json:"toolCallId"`
	ThreadID   string          `json:"threadId"`
	Memory     *struct {
		Thread threadRef `json:"thread"`
	} `json:"memory"`
}

// apiResumeStream answers POST /api/agents/:id/resume-stream: the user's
// answer to a suspended call, then the rest of the run as a stream.
func (s *Server) apiResumeStream(w http.ResponseWriter, r *http.Request) {
	run, err := s.startResume(r)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	defer run.close()
	s.writeChunks(w, run)
}

func (s *Server) startResume(r *http.Request) (*apiRun, error) {
	var b resumeBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if len(b.ResumeData) == 0 {
		return nil, badRequest(`Argument "resumeData" is required`)
	}
	if _, err := s.apiAgentIn(r.Context(), r.PathValue("agentId")); err != nil {
		return nil, err
	}
	ctx := r.Context()
	threadID := b.ThreadID
	if b.Memory != nil && b.Memory.Thread != "" {
		threadID = string(b.Memory.Thread)
	}
	if threadID == "" && b.RunID != "" {
		run, err := s.rt.GetRun(ctx, b.RunID)
		if err != nil {
			return nil, &apiError{http.StatusNotFound, fmt.Sprintf("run %s not found", b.RunID)}
		}
		threadID = run.ThreadID
	}
	if threadID == "" {
		return nil, badRequest("runId or memory.thread is required to find the suspended run")
	}
	callID := b.ToolCallID
	if callID == "" {
		pending, err := s.rt.Pending(ctx, threadID)
		if err != nil {
			return nil, err
		}
		if len(pending) != 1 {
			return nil, badRequest("toolCallId is required: %d tool calls are waiting on this thread", len(pending))
		}
		callID = pending[0].ToolCallID
	}
	sub := s.rt.Subscribe(threadID)
	res, err := s.rt.Resume(ctx, agentcore.ResumeRequest{ThreadID: threadID, ToolCallID: callID, Data: b.ResumeData})
	switch {
	case errors.Is(err, agentcore.ErrNotSuspended):
		sub.Close()
		return nil, &apiError{http.StatusNotFound, err.Error()}
	case errors.Is(err, agentcore.ErrBadResume):
		sub.Close()
		return nil, badRequest("%v", err)
	case err != nil:
		sub.Close()
		return nil, err
	}
	return &apiRun{id: res.ID, events: runEvents(ctx, sub, res.ID), close: sub.Close}, nil
}
