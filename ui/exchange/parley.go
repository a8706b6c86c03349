// Package exchange reads and writes threads as files: Parley's own JSON
// export (Mastra's v2 message format, tool calls included), Markdown for
// people, and ChatGPT's conversations.json for import.
//
// Reading never half-succeeds: Read returns every thread of a file or an
// error that names the file's problem and where it is ("messages[3].content:
// format must be 2"), and the caller stores the threads in one transaction.
package exchange

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"parley/agentcore"
	"parley/app/attach"
	"parley/app/chat"
)

const (
	// Format names Parley's thread export; Version is the version this
	// Parley writes and the newest it reads.
	Format  = "parley.thread"
	Version = 1
)

// File is Parley's JSON export of one thread.
type File struct {
	Format     string           `json:"format"`
	Version    int              `json:"version"`
	ExportedAt time.Time        `json:"exportedAt"`
	Thread     agentcore.Thread `json:"thread"`
	Messages   []Message        `json:"messages"`
	// Files are the files the messages' file parts name, by SHA-256.
	Files map[string]StoredFile `json:"files,omitempty"`
}

// StoredFile is a file a message carries, in an export: its bytes go as
// base64 (encoding/json's []byte).
type StoredFile struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// Message is a stored message in Mastra's v2 shape ({id, threadId,
// resourceId, role, content: {format: 2, parts, …}, createdAt}) with the
// message it follows in the thread's tree (parentId, none for a root),
// plus its status when it is not complete (a stopped or failed reply) and
// inactive when it is not on the branch the chat shows (an older version
// of an edited message or a regenerated reply, and what followed it).
//
// A file's messages are the whole tree, parents before their children; a
// file made before the tree (no parentId, no inactive) is one branch.
type Message struct {
	agentcore.Message
	Status   agentcore.MessageStatus `json:"status,omitempty"`
	Inactive bool                    `json:"inactive,omitempty"`
}

// JSON is the export of thread t with its messages, indented. msgs is the
// thread's whole tree as agentcore.MessageStore.ListTree reads it: every
// branch in Seq order, the messages of the branch shown Active.
// files holds the files the messages name (agentcore.Part.FileRef), by
// SHA-256.
func JSON(t agentcore.Thread, msgs []agentcore.Message, exportedAt time.Time, files ...map[string]StoredFile) ([]byte, error) {
	f := File{Format: Format, Version: Version, ExportedAt: exportedAt.UTC().Truncate(time.Millisecond),
		Thread: t, Messages: make([]Message, 0, len(msgs))}
	if len(files) > 0 && len(files[0]) > 0 {
		f.Files = files[0]
	}
	for _, m := range msgs {
		st := m.Status
		if st == agentcore.StatusComplete {
			st = ""
		}
		f.Messages = append(f.Messages, Message{Message: m, Status: st, Inactive: !m.Active})
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export thread %s as JSON: %w", t.ID, err)
	}
	return append(b, '\n'), nil
}

// Kind is the format a file was read as.
type Kind string

const (
	KindParley  Kind = "parley"
	KindChatGPT Kind = "chatgpt"
)

// Result is what a file holds.
type Result struct {
	Kind    Kind
	Threads []agentcore.ThreadImport
	// Files are the files the threads' messages carry, checked, by SHA-256.
	Files map[string]StoredFile
	// Skipped counts conversations with nothing to import (ChatGPT: no
	// user or assistant text).
	Skipped int
	// ReplacedIDs counts the thread, message and tool call ids of the file
	// that Parley does not accept (agentcore.ValidID) and that were
	// replaced by new ones (agentcore.ThreadImport.ReissueIDs).
	ReplacedIDs int
}

// droppedMeta are thread settings an imported file may not set: running
// tools without asking, and the folder tools work in, are the importing
// user's choice, not the file's.
var droppedMeta = chat.MachineKeys()

// Read reads a Parley export or a ChatGPT conversations.json (or one
// conversation of it). Ids in the file that Parley would not accept from
// its API are replaced by new ones, counted in ReplacedIDs: a file is
// someone else's, and ids end up in URLs and the page.
func Read(data []byte) (Result, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM some editors write
	if err := checkText(data); err != nil {
		return Result{}, err
	}
	if err := checkJSON(data); err != nil {
		return Result{}, err
	}
	res, err := read(data)
	if err != nil {
		return Result{}, err
	}
	for i := range res.Threads {
		res.ReplacedIDs += reissueParents(&res.Threads[i]) + res.Threads[i].ReissueIDs()
	}
	return res, nil
}

// read reads the file by its kind.
func read(data []byte) (Result, error) {
	switch first(data) {
	case '[':
		return readChatGPT(data)
	case '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			return Result{}, fmt.Errorf("read the file: %w", err)
		}
		if _, ok := top["mapping"]; ok {
			return readChatGPT(append(append([]byte{'['}, data...), ']'))
		}
		_, v := top["version"]
		_, th := top["thread"]
		_, ms := top["messages"]
		if v || th || ms {
			return readParley(top)
		}
		return Result{}, fmt.Errorf("the file is JSON but neither a Parley export ({version, thread, messages}) nor a ChatGPT export (an array of conversations with a mapping); its top-level keys are %s", keyList(top))
	}
	return Result{}, errors.New("the file is JSON but neither a Parley export (an object) nor a ChatGPT conversations.json (an array)")
}

// checkText refuses binary files before the JSON parser reports a
// confusing "invalid character".
func checkText(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("the file is empty")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("the file is binary, not JSON text (a zero byte at offset %d)", i)
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("the file is not UTF-8 text, so not JSON (an invalid byte 0x%02x at offset %d)", data[i], i)
	}
	return nil
}

// checkJSON reports a syntax error with its line, and says when the file
// was cut short.
func checkJSON(data []byte) error {
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	err := d.Decode(&v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		if _, err := d.Token(); err != io.EOF {
			return fmt.Errorf("the file goes on after its JSON value ends at offset %d", d.InputOffset())
		}
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the JSON ends in the middle of a value after %d bytes: the file looks truncated", len(data))
	case errors.As(err, &se):
		line := bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n")) + 1
		return fmt.Errorf("the file is not valid JSON: %v (line %d, offset %d)", se, line, se.Offset)
	}
	return fmt.Errorf("the file is not valid JSON: %w", err)
}

func first(data []byte) byte {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

func keyList(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "none"
	}
	var ks []string
	for k := range m {
		ks = append(ks, fmt.Sprintf("%q", k))
	}
	slices.Sort(ks)
	if len(ks) > 8 {
		ks = append(ks[:8], "…")
	}
	return strings.Join(ks, ", ")
}

// readParley reads Parley's export.
func readParley(top map[string]json.RawMessage) (Result, error) {
	for _, k := range []string{"version", "thread", "messages"} {
		if _, ok := top[k]; !ok {
			return Result{}, fmt.Errorf("not a complete Parley export: %q is missing", k)
		}
	}
	var version int
	if err := json.Unmarshal(top["version"], &version); err != nil {
		return Result{}, fmt.Errorf("version: want a number, got %s", clip(top["version"]))
	}
	if version < 1 || version > Version {
		return Result{}, fmt.Errorf("version %d: this Parley reads version %d exports (a newer Parley made this file?)", version, Version)
	}
	if raw, ok := top["format"]; ok {
		var f string
		if json.Unmarshal(raw, &f) != nil || f != Format {
			return Result{}, fmt.Errorf("format: want %q, got %s", Format, clip(raw))
		}
	}
	var t agentcore.Thread
	if err := strictObject(top["thread"], &t); err != nil {
		return Result{}, fmt.Errorf("thread: %w", err)
	}
	for _, k := range droppedMeta {
		delete(t.Metadata, k)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(top["messages"], &raws); err != nil || raws == nil {
		return Result{}, fmt.Errorf("messages: want an array, got %s", clip(top["messages"]))
	}
	imp := agentcore.ThreadImport{Thread: t, Messages: make([]agentcore.Message, 0, len(raws))}
	seen := map[string]int{}
	for i, raw := range raws {
		m, err := readMessage(raw)
		if err != nil {
			return Result{}, fmt.Errorf("messages[%d]: %w", i, err)
		}
		if j, dup := seen[m.ID]; dup && m.ID != "" {
			return Result{}, fmt.Errorf("messages[%d]: id %.40q repeats messages[%d]", i, m.ID, j)
		}
		if _, earlier := seen[m.ParentID]; m.ParentID != "" && !earlier {
			return Result{}, fmt.Errorf("messages[%d]: parentId %.40q is not the id of an earlier message of this thread", i, m.ParentID)
		}
		seen[m.ID] = i
		imp.Messages = append(imp.Messages, m)
	}
	files, err := readFiles(top["files"])
	if err != nil {
		return Result{}, err
	}
	for i, m := range imp.Messages {
		for _, p := range m.Content.Parts {
			if ref, ok := p.FileRef(); ok && files[ref].Data == nil {
				return Result{}, fmt.Errorf("messages[%d]: its file %.80q is not among the export's files", i, p.Filename)
			}
		}
	}
	return Result{Kind: KindParley, Threads: []agentcore.ThreadImport{imp}, Files: files}, nil
}

// readFiles reads an export's files: each must be what its name says (its
// SHA-256) and pass the checks a file attached in Parley passes.
func readFiles(raw json.RawMessage) (map[string]StoredFile, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var files map[string]StoredFile
	if err := json.Unmarshal(raw, &files); err != nil {
		return nil, fmt.Errorf("files: want an object of {mimeType, data (base64)} by SHA-256: %v", err)
	}
	for ref, f := range files {
		sum := sha256.Sum256(f.Data)
		if hex.EncodeToString(sum[:]) != ref {
			return nil, fmt.Errorf("files[%.70q]: its data is not the file that SHA-256 names", ref)
		}
		checked, err := attach.Check("file", f.MimeType, f.Data)
		if err != nil {
			return nil, fmt.Errorf("files[%.16s…]: %w", ref, err)
		}
		files[ref] = StoredFile{MimeType: checked.MediaType, Data: checked.Data}
	}
	return files, nil
}

// reissueParents gives a new id to each message of imp whose id Parley
// does not accept (agentcore.ValidID) and that another message names as
// its parent, and names it so in those messages: ReissueIDs would clear
// the id and leave its children naming a parent that is gone. It returns
// how many ids it replaced.
func reissueParents(imp *agentcore.ThreadImport) int {
	named := map[string]bool{}
	for _, m := range imp.Messages {
		if m.ParentID != "" && !agentcore.ValidID(m.ParentID) {
			named[m.ParentID] = true
		}
	}
	if len(named) == 0 {
		return 0
	}
	renamed := map[string]string{}
	for i := range imp.Messages {
		m := &imp.Messages[i]
		if id, ok := renamed[m.ParentID]; ok {
			m.ParentID = id
		}
		if named[m.ID] {
			if _, done := renamed[m.ID]; !done {
				renamed[m.ID] = agentcore.NewID()
				m.ID = renamed[m.ID]
			}
		}
	}
	return len(renamed)
}

// strictObject decodes an object, wording type errors by field.
func strictObject(raw json.RawMessage, v any) error {
	if first(raw) != '{' {
		return fmt.Errorf("want an object, got %s", clip(raw))
	}
	if err := checkTimes(raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: want %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}

// checkTimes names a timestamp that is not RFC 3339 (time's own error
// does not say which field).
func checkTimes(raw json.RawMessage) error {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return nil // reported by the decode that follows
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		v, ok := keys[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return fmt.Errorf("%s: want a time as text, got %s", k, clip(v))
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Errorf("%s: %q is not an RFC 3339 time", k, s)
		}
	}
	return nil
}

var (
	roles    = map[agentcore.Role]bool{agentcore.RoleUser: true, agentcore.RoleAssistant: true, agentcore.RoleSystem: true, agentcore.RoleSignal: true}
	statuses = map[agentcore.MessageStatus]agentcore.MessageStatus{
		"": agentcore.StatusComplete, agentcore.StatusComplete: agentcore.StatusComplete,
		agentcore.StatusInterrupted: agentcore.StatusInterrupted, agentcore.StatusError: agentcore.StatusError,
		// No run is writing it here: the store marks it interrupted.
		agentcore.StatusStreaming: agentcore.StatusStreaming,
		// Nothing will deliver it: kept as sent, as a restart does.
		agentcore.StatusQueued: agentcore.StatusComplete,
	}
	partTypes = map[string]bool{"text": true, "reasoning": true, "step-start": true, "tool-invocation": true, "source": true, "file": true}
	toolState = map[string]bool{"partial-call": true, "call": true, "suspended": true, "result": true}
)

// readMessage reads and checks one exported message.
func readMessage(raw json.RawMessage) (agentcore.Message, error) {
	var m Message
	if err := strictObject(raw, &m); err != nil {
		return agentcore.Message{}, err
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	for _, k := range []string{"role", "content"} {
		if _, ok := keys[k]; !ok {
			return agentcore.Message{}, fmt.Errorf("%q is missing", k)
		}
	}
	if !roles[m.Role] {
		return agentcore.Message{}, fmt.Errorf("role %q is not user, assistant, system or signal", m.Role)
	}
	st, ok := statuses[m.Status]
	if !ok {
		return agentcore.Message{}, fmt.Errorf("status %q is not complete, interrupted, error or streaming", m.Status)
	}
	c := m.Content
	if c.Format != 2 {
		return agentcore.Message{}, fmt.Errorf("content.format: want 2 (Mastra's v2 messages), got %d", c.Format)
	}
	if c.Parts == nil {
		return agentcore.Message{}, errors.New("content.parts: want an array")
	}
	for j, p := range c.Parts {
		if err := checkPart(p); err != nil {
			return agentcore.Message{}, fmt.Errorf("content.parts[%d]: %w", j, err)
		}
	}
	out := m.Message
	out.Status, out.Active = st, !m.Inactive
	// Stored content is compact JSON (tool arguments and results too); the
	// file's is indented. Read it as the store will keep it.
	b, err := json.Marshal(out.Content)
	if err == nil {
		out.Content = agentcore.Content{}
		err = json.Unmarshal(b, &out.Content)
	}
	if err != nil {
		return agentcore.Message{}, fmt.Errorf("content: %w", err)
	}
	return out, nil
}

func checkPart(p agentcore.Part) error {
	if !partTypes[p.Type] {
		return fmt.Errorf("part type %q is not one Parley keeps (text, reasoning, step-start, tool-invocation, source, file)", p.Type)
	}
	switch p.Type {
	case "file":
		if _, ok := p.FileRef(); !ok {
			return fmt.Errorf("a file part's data must be /files/<its SHA-256>, with the file among the export's files, not %.80q", p.Data)
		}
		if err := attach.CheckName(p.Filename); err != nil {
			return err
		}
	case "tool-invocation":
		ti := p.ToolInvocation
		switch {
		case ti == nil:
			return errors.New("a tool-invocation part without toolInvocation")
		case ti.ToolCallID == "" || ti.ToolName == "":
			return errors.New("toolInvocation needs toolCallId and toolName")
		case !toolState[ti.State]:
			return fmt.Errorf("toolInvocation.state %q is not partial-call, call, suspended or result", ti.State)
		}
	case "source":
		if p.Source == nil || p.Source.URL == "" {
			return errors.New("a source part without source.url")
		}
	}
	return nil
}

// clip shows the start of a JSON value in an error.
func clip(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "nothing"
	}
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return s
}
