package agentcore

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"parley/agentcore/llm"
)

// A thread's first message titles it at once (titleFrom). With AutoTitle
// on, the first reply that completes has the thread's model write a short
// title in its place, as Mastra's memory does with generateTitle: once,
// only over the title taken from the first message (a thread renamed
// meanwhile keeps its name), merging into the metadata.

// autoTitleKey marks, in a thread's metadata, a title taken from the first
// message that the model may replace.
const autoTitleKey = "autoTitle"

// TitlePrompt is the system prompt of the call that titles a thread.
const TitlePrompt = "You name chats. Reply with a title of at most six words for the chat that begins with the user's message below. Reply with the title only: no quotes, no full stop, nothing else."

// titleTimeout bounds the title call: a title that is late is not worth
// waiting for.
const titleTimeout = 30 * time.Second

// errTitled: the thread is no longer waiting for a title.
var errTitled = errors.New("thread already titled")

// markAutoTitle notes that thread's title came from its first message.
func (rt *Runtime) markAutoTitle(ctx context.Context, threadID string) {
	if !rt.AutoTitle {
		return
	}
	if _, err := rt.store.UpdateThreadMetadata(ctx, threadID, func(md map[string]any) error {
		md[autoTitleKey] = true
		return nil
	}); err != nil {
		rt.Log.Warn("mark the thread for a title", "thread", threadID, "err", err)
	}
}

// titleScan is how many of a thread's first messages are looked at for
// the first user message.
const titleScan = 10

// retitle has the model name the thread after its first completed reply,
// when its title is still the one taken from its first message.
func (rt *Runtime) retitle(threadID string, agent *Agent, spec string) {
	defer rt.wg.Done()
	ctx, cancel := context.WithTimeout(rt.titles, titleTimeout)
	defer cancel()
	thread, err := rt.store.GetThread(ctx, threadID)
	if err != nil || thread.Metadata[autoTitleKey] != true || agent == nil || agent.Models == nil {
		return
	}
	// The first user message among the thread's first few, read one at a
	// time: the reply after it may be megabytes long, and read with it
	// while the chat reads it back, it doubled the memory the reply cost.
	first, after := "", int64(0)
	for range titleScan {
		msgs, err := rt.store.ListMessages(ctx, threadID, MessageQuery{AfterSeq: after, Limit: 1})
		if err != nil {
			return
		}
		if len(msgs) == 0 {
			break
		}
		if msgs[0].Role == RoleUser {
			first = msgs[0].Content.Text()
			break
		}
		after = msgs[0].Seq
	}
	title, err := rt.writeTitle(ctx, agent, spec, first)
	if err != nil {
		rt.Log.Info("the model wrote no title; the first message's stays", "thread", threadID, "err", err)
	}
	// The mark goes either way: one try per thread.
	if _, err := rt.store.UpdateThreadMetadata(ctx, threadID, func(md map[string]any) error {
		if md[autoTitleKey] != true {
			return errTitled
		}
		delete(md, autoTitleKey)
		return nil
	}); err != nil || title == "" {
		return
	}
	now, err := rt.store.GetThread(ctx, threadID)
	if err != nil || now.Title != thread.Title || title == thread.Title {
		return // renamed meanwhile, or nothing to change
	}
	if _, err := rt.store.UpdateThread(ctx, threadID, ThreadPatch{Title: &title}); err != nil {
		rt.Log.Warn("set the thread's title", "thread", threadID, "err", err)
		return
	}
	rt.bus.Publish(Event{Type: EventThread, ThreadID: threadID})
}

// writeTitle asks the model for a title for a chat that begins with first.
func (rt *Runtime) writeTitle(ctx context.Context, agent *Agent, spec, first string) (string, error) {
	if strings.TrimSpace(first) == "" {
		return "", errors.New("no first message")
	}
	model, err := agent.Models(spec)
	if err != nil {
		return "", err
	}
	var text strings.Builder
	req := llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Text: TitlePrompt},
			{Role: llm.RoleUser, Text: clip(first, 2000)},
		},
		MaxOutputTokens: 40,
	}
	for part, err := range model.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		if part.Type == llm.PartTextDelta {
			text.WriteString(part.Text)
		}
	}
	return cleanTitle(text.String()), nil
}

// cleanTitle makes what the model answered a title: its first line, without
// a "Title:" label, quotes or a full stop, at most titleRunes long.
func cleanTitle(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimSpace(s)
	if label, rest, ok := strings.Cut(s, ":"); ok && strings.EqualFold(strings.TrimSpace(label), "title") {
		s = strings.TrimSpace(rest)
	}
	for {
		t := strings.TrimRight(strings.Trim(s, "\"'`*#“”‘’ "), ".")
		if t == s {
			break
		}
		s = t
	}
	return titleFrom(s)
}

// clip is s cut to at most n bytes at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
