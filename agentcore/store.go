package agentcore

import (
	"context"
	"encoding/json"
	"time"
)

// ThreadQuery selects threads. Threads come pinned first, then by their
// last message activity (Thread.UpdatedAt), newest first.
type ThreadQuery struct {
	ResourceID string // empty: all resources
	Limit      int    // 0: no limit
	Offset     int
}

// MessageQuery selects messages of one thread in sequence order.
type MessageQuery struct {
	AfterSeq  int64 // only messages with Seq > AfterSeq
	BeforeSeq int64 // >0: only messages with Seq < BeforeSeq (the page before a cursor)
	Limit     int   // 0: no limit; >0 with Last: the last Limit messages
	Last      bool
}

// ThreadStore keeps threads (and creates their resource on demand).
type ThreadStore interface {
	CreateThread(ctx context.Context, t Thread) (Thread, error)
	GetThread(ctx context.Context, id string) (Thread, error)
	ListThreads(ctx context.Context, q ThreadQuery) ([]Thread, error)
	// UpdateThread and UpdateThreadMetadata leave UpdatedAt alone: a
	// rename, a pin or a changed setting is not activity.
	UpdateThread(ctx context.Context, id string, p ThreadPatch) (Thread, error)
	// UpdateThreadMetadata changes the thread's metadata with fn (handed
	// the stored map, never nil, to change in place) atomically: no other
	// write lands between the read and the write. An error from fn writes
	// nothing and is returned wrapped.
	UpdateThreadMetadata(ctx context.Context, id string, fn func(meta map[string]any) error) (Thread, error)
	DeleteThread(ctx context.Context, id string) error // deletes its messages and runs too
	// TrashThread marks the thread deleted at at without deleting anything:
	// from then on every read and update of it answers ErrNotFound (it is
	// gone from lists and search) until RestoreThread brings it back whole.
	// ErrNotFound when there is no such thread, or it is in the trash.
	TrashThread(ctx context.Context, id string, at time.Time) error
	// RestoreThread takes a thread out of the trash; ErrNotFound when it is
	// not in it.
	RestoreThread(ctx context.Context, id string) error
	// PurgeTrash deletes for good the threads trashed before before, with
	// their messages and runs, and returns how many.
	PurgeTrash(ctx context.Context, before time.Time) (int, error)
}

// StoredFile is a file attached to a message, as stored.
type StoredFile struct {
	MediaType string
	Data      []byte
}

// FileStore keeps the files attached to messages, once each by their
// SHA-256 (hex), which a file part names (Part.FileRef). A file goes with
// the last message that uses it; one never sent goes an hour after it was
// added.
type FileStore interface {
	// PutFile stores data of the checked media type and returns its SHA-256.
	PutFile(ctx context.Context, mime string, data []byte) (string, error)
	// GetFile returns a stored file; ErrNotFound when there is none.
	GetFile(ctx context.Context, ref string) (StoredFile, error)
	// FileInfo returns a stored file's media type and size, without its
	// bytes; ErrNotFound when there is none.
	FileInfo(ctx context.Context, ref string) (mime string, size int64, err error)
}

// MessageStore keeps messages. AppendMessage assigns Seq (and ID and
// CreatedAt when empty) and bumps the thread's UpdatedAt, as MoveMessages
// does: a thread's UpdatedAt is its last message activity.
//
// A thread's messages form a tree (Message.ParentID): editing a sent
// message or regenerating a reply adds a sibling, and the old branch stays.
// The chat is the tree's active branch: one path from a root down to the
// active leaf, the active message with the highest Seq. Seq grows with
// every message stored or moved, so the active branch in Seq order is that
// path from root to leaf. ListMessages reads the active branch only, so
// what the chat shows and what the model reads are the same; ListTree
// reads everything. Every write keeps the active set one path.
//
// Edit user message U (parent P): RewindTo(P), then AppendMessage the new
// text: a sibling of U. Regenerate reply R (parent U): RewindTo(U), then the
// run appends its reply: a sibling of R.
type MessageStore interface {
	// AppendMessage stores m as the new active leaf. Its parent is the
	// thread's active leaf, or m.ParentID when it is set: a message of
	// the same thread (an error naming it otherwise), which first becomes
	// the active leaf, as by RewindTo.
	AppendMessage(ctx context.Context, m Message) (Message, error)
	UpdateMessage(ctx context.Context, id string, c Content, s MessageStatus) error
	// MarkMessage sets a message's status and the given keys of its
	// content's metadata, keeping the rest of the content as stored: the
	// small write a failed reply falls back to when its whole content
	// could not be written.
	MarkMessage(ctx context.Context, id string, s MessageStatus, meta map[string]string) error
	GetMessage(ctx context.Context, id string) (Message, error)
	ListMessages(ctx context.Context, threadID string, q MessageQuery) ([]Message, error)
	// MoveMessages puts the messages ids, in that order, at the end of
	// their thread: each is taken out of the tree (its children follow
	// its parent) and appended below the active leaf, active.
	MoveMessages(ctx context.Context, threadID string, ids ...string) error
	// DeleteMessage removes one message; ErrNotFound when there is none.
	// Its children follow its parent.
	DeleteMessage(ctx context.Context, id string) error

	// SwitchBranch shows the branch through messageID (‹ n/m › on a
	// message): messageID and its ancestors become active, the rest of
	// the old active branch below where they part does not, and below
	// messageID the branch follows, at each level, the child that was
	// active last, down to a leaf. A message already active changes
	// nothing. ErrNotFound, wrapped with the id, when messageID is not a
	// message of threadID (or the thread is in the trash).
	SwitchBranch(ctx context.Context, threadID, messageID string) error
	// RewindTo makes messageID the active leaf: its ancestors and itself
	// active, nothing below it; the messages left are kept, inactive.
	// An empty messageID rewinds to before the first message: nothing is
	// active, and the next message appended is a new root. Errors as
	// SwitchBranch's.
	RewindTo(ctx context.Context, threadID, messageID string) error
	// ListTree returns every message of the thread, of every branch, with
	// ParentID and Active, in Seq order (a parent before its children).
	ListTree(ctx context.Context, threadID string) ([]Message, error)
	// Siblings answers, for messages of threadID (a page of the chat),
	// "version n of m": the map holds each of ids that has siblings
	// (messages of the same parent; roots of the thread are siblings of
	// each other). Ids without siblings, and ids not in the thread, are
	// left out.
	Siblings(ctx context.Context, threadID string, ids ...string) (map[string]Siblings, error)
	// ForkThread stores a new thread, made from t as CreateThread does
	// (its ResourceID defaults to the source thread's), holding a copy of
	// the branch of fromThreadID from its root down to atMessageID (any
	// message, on the active branch or not): new message ids, the same
	// content, roles, types, statuses, run ids and creation times, all
	// active, one path. A copy of a message still streaming is interrupted
	// and one still queued is complete: the run they waited on is the
	// source thread's. The copied replies' usage counts in the new thread
	// too, as an imported reply's does. The new thread's metadata records
	// where it came from under MetaForkedFrom. ErrNotFound, wrapped, when
	// atMessageID is not a message of fromThreadID (or that thread is in
	// the trash).
	ForkThread(ctx context.Context, fromThreadID, atMessageID string, t Thread) (Thread, error)
}

// Siblings are the versions of one turn: messages with the same parent.
type Siblings struct {
	IDs   []string // every sibling, the message among them, in Seq order
	Index int      // the message's place in IDs: it is version Index+1 of len(IDs)
}

// MetaForkedFrom is the thread metadata key of a fork's origin:
// {"threadId": …, "messageId": …}, the thread and message it was forked at.
const MetaForkedFrom = "forkedFrom"

// RunStore keeps runs.
type RunStore interface {
	CreateRun(ctx context.Context, r Run) error
	FinishRun(ctx context.Context, r Run) error // writes Status, Error, Usage, FinishedAt
	GetRun(ctx context.Context, id string) (Run, error)
	// ListRuns lists runs by status, newest first.
	ListRuns(ctx context.Context, q RunQuery) ([]Run, error)
}

// RunQuery selects runs by status.
type RunQuery struct {
	Statuses []RunStatus
	Limit    int // 0: no limit
}

// StateStore keeps per-thread state beside the conversation, one JSON value
// per (thread, type) — Mastra's threadState domain: the task list lives under
// "task". A value goes when its thread is deleted.
type StateStore interface {
	// GetState returns the value stored under typ; ok is false when there
	// is none.
	GetState(ctx context.Context, threadID, typ string) (value json.RawMessage, ok bool, err error)
	// SetState replaces the value stored under typ.
	SetState(ctx context.Context, threadID, typ string, value json.RawMessage) error
}

// SettingsStore keeps app-wide settings as JSON by key.
type SettingsStore interface {
	GetSetting(ctx context.Context, key string) (json.RawMessage, bool, error)
	SetSetting(ctx context.Context, key string, value json.RawMessage) error
}

// Store is everything the runtime keeps.
type Store interface {
	ThreadStore
	MessageStore
	FileStore
	RunStore
	SettingsStore
	StateStore
	SearchStore
	ImportStore
	UsageStore
	Close() error
}
