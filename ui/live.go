package ui

import (
	"bytes"
	"context"
	"strconv"

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
}

type livePart struct {
	kind string
	key  string
	md   *markdown.Stream // text
	html string           // everything else: as last sent
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
			if err := v.apply(lr.parts[i].md.Next(p.text)); err != nil {
				return err
			}
		}
	}
	return nil
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
			var ops []markdown.Op
			if final {
				ops = lp.md.Finish(p.text)
			} else {
				ops = lp.md.Next(p.text)
			}
			if err := v.apply(ops); err != nil {
				return false, err
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
		if err := v.sse.PatchElements(html, datastar.WithSelectorID(target), datastar.WithModeReplace()); err != nil {
			return false, err
		}
	}
	return true, nil
}

// finishLive brings a reply that was being written to its stored version m
// and forgets it.
func (v *chatStream) finishLive(lr *liveReply, m agentcore.Message) error {
	delete(v.live, m.ID)
	view, content, _ := v.s.messageShell(m, agentcore.Live{}, false)
	pieces := replyPieces(m.ThreadID, content, &v.args)
	whole := func() error {
		view.Parts = replyParts(m.ThreadID, content, &v.args)
		return v.sse.PatchElements(renderString(components.MessageView(view)),
			datastar.WithSelectorID(components.MsgID(m.ID)), datastar.WithModeReplace())
	}
	if !lr.fits(pieces) {
		return whole()
	}
	if ok, err := v.updateLive(lr, pieces, true); err != nil || !ok {
		if err != nil {
			return err
		}
		return whole()
	}
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
