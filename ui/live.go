package ui

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"parley/agentcore"
	"parley/components"
	"parley/ui/markdown"
)

// liveReply is what one page shows of the reply being written, so that a
// frame sends what changed and not the reply so far: text through a
// markdown.Stream (finished blocks once, the open block again), a card or
// a reasoning block when its own HTML changed, the message around them
// when it did. The reply's body carries data-ignore-morph, so a morph of
// the message leaves the pieces alone; they are patched by id with modes
// that do not morph (before, after, replace, remove).
//
// When the run ends, finishLive brings the page to the stored reply the
// same way; the page then shows what rendering the whole reply shows (the
// stream's wrappers lay out as nothing: display: contents).
type liveReply struct {
	id    string // the message's
	parts []livePart
	shell string // the message rendered without its body, as last sent
	// final is the stored reply of a run that ended while the page was
	// still behind it: later frames finish it (chatStream.finishing).
	final *agentcore.Message
}

type livePart struct {
	kind  string
	key   string
	md    *markdown.Stream // text
	shown int              // text: bytes of it given to md
	html  string           // everything else: as last sent
}

// paced is text cut to at most pace bytes past from, at the last line
// end within them when there is one, else at a character boundary. The
// pace is the gate's (flow.go): at most paceMax, about 50 KB of HTML when
// it is all highlighted code. A page given a flood (a reply of megabytes
// at full speed, or opened on one being written) catches up over frames
// it draws in time instead of freezing for one long one; models write far
// below paceMin per frame, so the page never lags them.
func paced(text string, from, pace int) (string, bool) {
	if from > len(text) {
		from = 0 // rewritten shorter: the stream starts over
	}
	if len(text)-from <= pace {
		return text, false
	}
	cut := from + pace
	if nl := strings.LastIndexByte(text[from:cut], '\n'); nl >= 0 {
		return text[:from+nl+1], true
	}
	for cut > from && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut], true
}

// fits says whether the parts on the page still begin pieces, so that
// updating them in place is right.
func (lr *liveReply) fits(pieces []piece) bool {
	if len(pieces) < len(lr.parts) {
		return false
	}
	for i, p := range lr.parts {
		if pieces[i].kind != p.kind || pieces[i].key != p.key {
			return false
		}
	}
	return true
}

func (lr *liveReply) partID(i int) string {
	return components.MsgID(lr.id) + "-p" + strconv.Itoa(i)
}

// add records piece i and returns what renders it first: a text as its
// stream's empty frame.
func (lr *liveReply) add(i int, p piece) components.Part {
	lp := livePart{kind: p.kind, key: p.key}
	part := p.view
	switch p.kind {
	case pieceText:
		lp.md = markdown.NewStream(lr.partID(i))
		part.HTML = lp.md.Shell()
	case pieceReasoning:
		part.ID = lr.partID(i)
	}
	if p.kind != pieceText {
		lp.html = renderString(components.PartView(part))
	}
	lr.parts = append(lr.parts, lp)
	return part
}

// showLive puts the reply being written on the page: whole when the page
// does not hold it yet (appended to the messages when isNew, else in place
// of the message), then only what changed.
func (v *chatStream) showLive(m agentcore.Message, live agentcore.Live, isNew bool) error {
	view, content, _ := v.s.messageShell(m, live, true)
	pieces := replyPieces(m.ThreadID, content, &v.args)
	lr := v.live[m.ID]
	if lr != nil {
		lr.final = nil // written again: no longer finishing
	}
	if lr == nil || isNew || !lr.fits(pieces) {
		return v.startLive(m.ID, view, pieces, isNew)
	}
	if ok, err := v.updateLive(lr, pieces, false); err != nil || !ok {
		if err != nil {
			return err
		}
		return v.startLive(m.ID, view, pieces, false)
	}
	return v.patchShell(lr, view)
}

func (v *chatStream) startLive(id string, view components.Message, pieces []piece, isNew bool) error {
	lr := &liveReply{id: id}
	v.live[id] = lr
	view.Live = true
	for i, p := range pieces {
		view.Parts = append(view.Parts, lr.add(i, p))
	}
	html := renderString(components.MessageView(view))
	var err error
	if isNew {
		err = v.sse.PatchElements(html, datastar.WithSelectorID("messages"), datastar.WithModeAppend())
	} else {
		err = v.sse.PatchElements(html, datastar.WithSelectorID(components.MsgID(id)), datastar.WithModeReplace())
	}
	if err != nil {
		return err
	}
	lr.shell = shellOf(view)
	for i, p := range pieces {
		if p.kind == pieceText {
			if err := v.nextText(&lr.parts[i], p.text, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextText gives a text part's stream the next paced piece of text (final:
// text is complete), and marks the page behind when some of it waits.
func (v *chatStream) nextText(lp *livePart, text string, final bool) error {
	text, behind := paced(text, lp.shown, v.gate.pace)
	lp.shown = len(text)
	var ops []markdown.Op
	if final && !behind {
		ops = lp.md.Finish(text)
	} else {
		ops = lp.md.Next(text)
	}
	v.behind = v.behind || behind
	return v.apply(ops)
}

// updateLive brings the parts on the page to pieces (final: the reply is
// complete). It says false when a part changed in a way it cannot patch
// (a source replaced), and the caller renders the reply again.
func (v *chatStream) updateLive(lr *liveReply, pieces []piece, final bool) (bool, error) {
	for i, p := range pieces {
		if i >= len(lr.parts) {
			part := lr.add(i, p)
			if err := v.sse.PatchElements(renderString(components.PartView(part)),
				datastar.WithSelectorID(components.CursorID(lr.id)), datastar.WithModeBefore()); err != nil {
				return false, err
			}
		}
		lp := &lr.parts[i]
		if p.kind == pieceText {
			if err := v.nextText(lp, p.text, final); err != nil {
				return false, err
			}
			if lp.shown < len(p.text) {
				// The page is behind this text: what follows it (a card, a
				// question) waits for it, so that nothing appears below
				// text still to come and is pushed down as it does.
				return true, nil
			}
			continue
		}
		part := p.view
		target := ""
		switch p.kind {
		case pieceTool:
			target = components.ToolID(p.key)
		case pieceReasoning:
			part.ID = lr.partID(i)
			target = part.ID
		}
		html := renderString(components.PartView(part))
		if html == lp.html {
			continue
		}
		if target == "" {
			return false, nil
		}
		lp.html = html
		v.sent(html)
		v.frameReplaced += len(html)
		if err := v.sse.PatchElements(html, datastar.WithSelectorID(target), datastar.WithModeReplace()); err != nil {
			return false, err
		}
	}
	return true, nil
}

// finishLive brings a reply that was being written to its stored version m
// and forgets it; when the page is behind, it keeps m for later frames.
func (v *chatStream) finishLive(lr *liveReply, m agentcore.Message) error {
	view, content, _ := v.s.messageShell(m, agentcore.Live{}, false)
	pieces := replyPieces(m.ThreadID, content, &v.args)
	whole := func() error {
		view.Parts = replyParts(m.ThreadID, content, &v.args)
		return v.sse.PatchElements(renderString(components.MessageView(view)),
			datastar.WithSelectorID(components.MsgID(m.ID)), datastar.WithModeReplace())
	}
	if !lr.fits(pieces) {
		delete(v.live, m.ID)
		return whole()
	}
	behind := v.behind
	v.behind = false
	ok, err := v.updateLive(lr, pieces, true)
	if err != nil {
		return err
	}
	if !ok {
		delete(v.live, m.ID)
		return whole()
	}
	if v.behind {
		lr.final = &m
		return nil
	}
	v.behind = behind
	delete(v.live, m.ID)
	if err := v.sse.RemoveElementByID(components.CursorID(m.ID)); err != nil {
		return err
	}
	return v.patchShell(lr, view)
}

// patchShell morphs the message around its body when that changed (its
// status, model, note, usage); the body is left alone.
func (v *chatStream) patchShell(lr *liveReply, view components.Message) error {
	html := shellOf(view)
	if html == lr.shell {
		return nil
	}
	lr.shell = html
	return v.sse.PatchElements(html)
}

func shellOf(view components.Message) string {
	view.Live, view.Shell, view.Parts, view.HTML = true, true, nil, ""
	return renderString(components.MessageView(view))
}

// apply sends a markdown.Stream's operations.
func (v *chatStream) apply(ops []markdown.Op) error {
	for _, op := range ops {
		// What a frame adds counts towards waiting for the page; the open
		// block it replaces only when that is large: a fast reply's open
		// paragraph is re-sent every frame, and drawing it is cheap.
		if op.Mode != markdown.Replace || len(op.HTML) >= ackReplaceMin {
			v.sent(op.HTML)
		}
		if op.Mode == markdown.Replace {
			v.frameReplaced += len(op.HTML)
		} else {
			v.frameAdded += len(op.HTML)
		}
		var err error
		switch op.Mode {
		case markdown.Before:
			err = v.sse.PatchElements(op.HTML, datastar.WithSelectorID(op.ID), datastar.WithModeBefore())
		case markdown.After:
			err = v.sse.PatchElements(op.HTML, datastar.WithSelectorID(op.ID), datastar.WithModeAfter())
		case markdown.Replace:
			err = v.sse.PatchElements(op.HTML, datastar.WithSelectorID(op.ID), datastar.WithModeReplace())
		case markdown.Remove:
			err = v.sse.RemoveElementByID(op.ID)
		case markdown.AppendCode:
			err = v.sse.PatchElements(op.HTML, datastar.WithSelector("#"+op.ID+" code"), datastar.WithModeAppend())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func renderString(c templ.Component) string {
	var b bytes.Buffer
	// Rendering into a buffer fails only if a component does, and ours
	// only write.
	_ = c.Render(context.Background(), &b)
	return b.String()
}
