package toolkit

import (
	"context"
	"fmt"
	"strings"

	"parley/agentcore"
)

// Inbox is the notification inbox the notification-inbox tool works on
// (the Runtime).
type Inbox interface {
	Notifications(ctx context.Context, q agentcore.NotificationQuery) ([]agentcore.Notification, error)
	ReadNotifications(ctx context.Context, threadID, id string) (agentcore.ReadResult, error)
	SetNotificationStatus(ctx context.Context, threadID, id string, s agentcore.NotificationStatus) (agentcore.Notification, error)
}

// InboxInput is notification-inbox's input (spec §4.7). Limit is at most
// 1000: a page the model can read; more would flood its context.
type InboxInput struct {
	Action   string `json:"action" enum:"list,read,markSeen,dismiss,archive,search" desc:"What to do: list or search the inbox, read notifications (delivers their full text), or mark one seen, dismissed or archived"`
	ThreadID string `json:"threadId,omitempty" desc:"The thread whose inbox to use; defaults to the current thread"`
	ID       string `json:"id,omitempty" desc:"The notification id (read, markSeen, dismiss, archive)"`
	Status   string `json:"status,omitempty" enum:"pending,delivered,seen,dismissed,archived,discarded,failed" desc:"Only notifications with this status (list, search)"`
	Priority string `json:"priority,omitempty" enum:"low,medium,high,urgent" desc:"Only notifications with this priority (list, search)"`
	Source   string `json:"source,omitempty" desc:"Only notifications from this source (list, search)"`
	Query    string `json:"query,omitempty" desc:"Text to find in summary, kind or source (search)"`
	Limit    int    `json:"limit,omitempty" minimum:"0" maximum:"1000" desc:"At most this many notifications (list, search)"`
}

// NotificationInboxTool is the notification-inbox tool: the agent lists,
// searches and reads its thread's notifications and marks them dealt with.
// inbox is the runtime that keeps them.
func NotificationInboxTool(inbox Inbox) *agentcore.Tool {
	return agentcore.NewTool("notification-inbox",
		"Work with this thread's notification inbox: list or search notifications, read them (their full text is delivered to you), or mark one seen, dismissed or archived.",
		func(ctx context.Context, in InboxInput, tc *agentcore.ToolContext) (any, error) {
			threadID := in.ThreadID
			if threadID == "" {
				threadID = tc.ThreadID
			}
			if threadID == "" {
				return nil, fmt.Errorf("notification-inbox requires a threadId")
			}
			ib := inbox
			switch in.Action {
			case "list", "search":
				if in.Action == "search" && strings.TrimSpace(in.Query) == "" {
					return nil, fmt.Errorf("notification-inbox search requires query")
				}
				q := agentcore.NotificationQuery{ThreadID: threadID, Limit: in.Limit, Text: in.Query}
				if in.Status != "" {
					q.Statuses = []agentcore.NotificationStatus{agentcore.NotificationStatus(in.Status)}
				}
				if in.Priority != "" {
					q.Priorities = []agentcore.Priority{agentcore.Priority(in.Priority)}
				}
				if in.Source != "" {
					q.Sources = []string{in.Source}
				}
				list, err := ib.Notifications(ctx, q)
				if err != nil {
					return nil, err
				}
				if list == nil {
					list = []agentcore.Notification{}
				}
				return map[string]any{"notifications": list}, nil
			case "read":
				return ib.ReadNotifications(ctx, threadID, in.ID)
			case "markSeen", "dismiss", "archive":
				if in.ID == "" {
					return nil, fmt.Errorf("notification-inbox %s requires id", in.Action)
				}
				status := map[string]agentcore.NotificationStatus{"markSeen": agentcore.NoteSeen, "dismiss": agentcore.NoteDismissed, "archive": agentcore.NoteArchived}[in.Action]
				n, err := ib.SetNotificationStatus(ctx, threadID, in.ID, status)
				if err != nil {
					return nil, err
				}
				return map[string]any{"notification": n}, nil
			}
			return nil, fmt.Errorf("notification-inbox: unknown action %q", in.Action)
		})
}
