package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Priority is how urgent a notification is.
type Priority string

const (
	PriorityLow    Priority = "low"
	PriorityMedium Priority = "medium"
	PriorityHigh   Priority = "high"
	PriorityUrgent Priority = "urgent"
)

// rank orders priorities, most urgent first.
func (p Priority) rank() int {
	switch p {
	case PriorityUrgent:
		return 0
	case PriorityHigh:
		return 1
	case PriorityMedium:
		return 2
	}
	return 3
}

// ParsePriority checks p; "" is medium.
func ParsePriority(p string) (Priority, error) {
	switch Priority(p) {
	case "":
		return PriorityMedium, nil
	case PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent:
		return Priority(p), nil
	}
	return "", fmt.Errorf("invalid priority %q: use low, medium, high or urgent", p)
}

// NotificationStatus is where a notification is in its life.
type NotificationStatus string

const (
	NotePending   NotificationStatus = "pending"
	NoteDelivered NotificationStatus = "delivered"
	NoteSeen      NotificationStatus = "seen"
	NoteDismissed NotificationStatus = "dismissed"
	NoteArchived  NotificationStatus = "archived"
	NoteDiscarded NotificationStatus = "discarded"
	NoteFailed    NotificationStatus = "failed"
)

// MaxDeliveryAttempts is how often delivery of one notification is tried
// before it is marked failed.
const MaxDeliveryAttempts = 5

// Notification is one record of a thread's inbox (Mastra's
// NotificationRecord). Ids are unique per thread.
type Notification struct {
	ID                    string             `json:"id"`
	ThreadID              string             `json:"threadId"`
	Source                string             `json:"source"`
	Kind                  string             `json:"kind"`
	Priority              Priority           `json:"priority"`
	Status                NotificationStatus `json:"status"`
	Summary               string             `json:"summary"`
	Payload               json.RawMessage    `json:"payload,omitempty"`
	ResourceID            string             `json:"resourceId,omitempty"`
	AgentID               string             `json:"agentId,omitempty"`
	SourceID              string             `json:"sourceId,omitempty"`
	DedupeKey             string             `json:"dedupeKey,omitempty"`
	CoalesceKey           string             `json:"coalesceKey,omitempty"`
	CoalescedCount        int                `json:"coalescedCount"`
	Attributes            Attrs              `json:"attributes,omitempty"`
	CreatedAt             time.Time          `json:"createdAt"`
	UpdatedAt             time.Time          `json:"updatedAt"`
	DeliveredAt           *time.Time         `json:"deliveredAt,omitempty"`
	SeenAt                *time.Time         `json:"seenAt,omitempty"`
	DismissedAt           *time.Time         `json:"dismissedAt,omitempty"`
	ArchivedAt            *time.Time         `json:"archivedAt,omitempty"`
	DiscardedAt           *time.Time         `json:"discardedAt,omitempty"`
	DeliverAt             *time.Time         `json:"deliverAt,omitempty"`
	SummaryAt             *time.Time         `json:"summaryAt,omitempty"`
	DeliveryReason        string             `json:"deliveryReason,omitempty"`
	DeliveryAttempts      int                `json:"deliveryAttempts"`
	LastDeliveryAttemptAt *time.Time         `json:"lastDeliveryAttemptAt,omitempty"`
	LastDeliveryError     string             `json:"lastDeliveryError,omitempty"`
	DeliveredSignalID     string             `json:"deliveredSignalId,omitempty"`
	SummarySignalID       string             `json:"summarySignalId,omitempty"`
	Metadata              map[string]any     `json:"metadata,omitempty"`
	// SnoozedUntil hides the record from the inbox panel until then; it
	// changes nothing about its delivery ("not now" is not "no").
	SnoozedUntil *time.Time `json:"snoozedUntil,omitempty"`
}

// NotificationQuery selects notifications, newest updatedAt first.
type NotificationQuery struct {
	ThreadID   string // "" = every thread
	Statuses   []NotificationStatus
	Priorities []Priority
	Sources    []string
	Text       string // case-insensitive match on summary, kind or source
	Limit      int    // 0 = no limit
}

// NotificationStore keeps notifications (Mastra's notifications domain).
type NotificationStore interface {
	// CreateNotification stores a new record; ID, CreatedAt and UpdatedAt
	// are filled in when empty.
	CreateNotification(ctx context.Context, n Notification) (Notification, error)
	// GetNotification returns one record; ErrNotFound when there is none.
	GetNotification(ctx context.Context, threadID, id string) (Notification, error)
	// SaveNotification replaces every field of an existing record;
	// ErrNotFound when there is none.
	SaveNotification(ctx context.Context, n Notification) error
	// FindCoalescable returns the pending record of the same thread,
	// source, kind, agent and resource with the same dedupeKey (when
	// dedupeKey is set) or the same coalesceKey; ok is false when none.
	FindCoalescable(ctx context.Context, n Notification) (found Notification, ok bool, err error)
	// ListNotifications lists records matching q, newest updatedAt first.
	ListNotifications(ctx context.Context, q NotificationQuery) ([]Notification, error)
	// DueNotifications lists pending records whose deliverAt or summaryAt
	// is at or before now, earliest due first, then by updatedAt.
	DueNotifications(ctx context.Context, now time.Time, limit int) ([]Notification, error)
	// NextDue is the earliest deliverAt/summaryAt of a pending record; ok
	// is false when nothing is scheduled.
	NextDue(ctx context.Context) (at time.Time, ok bool, err error)
}

// IsNotFound reports whether err means something does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// stamp sets the timestamp that goes with a status change.
func (n *Notification) stamp(s NotificationStatus, now time.Time) {
	n.Status, n.UpdatedAt = s, now
	t := now
	switch s {
	case NoteDelivered:
		n.DeliveredAt = &t
	case NoteSeen:
		n.SeenAt = &t
	case NoteDismissed:
		n.DismissedAt = &t
	case NoteArchived:
		n.ArchivedAt = &t
	case NoteDiscarded:
		n.DiscardedAt = &t
	}
}
