package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/godbus/dbus/v5"

	"parley/agentcore"
)

// Alerter shows an OS notification.
type Alerter interface {
	Alert(title, body string) error
}

// dbusAlerter shows notifications through the desktop's notification
// server (org.freedesktop.Notifications on the session bus).
type dbusAlerter struct {
	conn *dbus.Conn
}

// newDBusAlerter connects to the session bus.
func newDBusAlerter() (*dbusAlerter, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("OS notifications: no session bus: %w", err)
	}
	return &dbusAlerter{conn: conn}, nil
}

func (a *dbusAlerter) Alert(title, body string) error {
	obj := a.conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	call := obj.Call("org.freedesktop.Notifications.Notify", 0,
		"Parley", uint32(0), "", title, body, []string{}, map[string]dbus.Variant{}, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("OS notification: %w", call.Err)
	}
	return nil
}

func (a *dbusAlerter) Close() error { return a.conn.Close() }

// watchAlerts shows an OS notification for what needs the user at once —
// an urgent or high notification, a question, a plan or an approval — while
// no Parley window has the focus. It returns when ctx ends.
func watchAlerts(ctx context.Context, rt *agentcore.Runtime, focused func() bool, a Alerter, log *slog.Logger) {
	sub := rt.Subscribe("", agentcore.EventNotification, agentcore.EventToolSuspended, agentcore.EventToolApproval)
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Ready():
		}
		for _, e := range sub.Drain() {
			title, body, ok := alertOf(ctx, rt, e)
			if !ok || focused() {
				continue
			}
			if err := a.Alert(title, body); err != nil {
				log.Warn("show an OS notification", "err", err)
			}
		}
	}
}

// alertOf is the OS notification an event deserves, if any.
func alertOf(ctx context.Context, rt *agentcore.Runtime, e agentcore.Event) (title, body string, ok bool) {
	thread := "a chat"
	if t, err := rt.GetThread(ctx, e.ThreadID); err == nil && t.Title != "" {
		thread = "“" + t.Title + "”"
	}
	switch e.Type {
	case agentcore.EventNotification:
		var n agentcore.Notification
		if len(e.Result) == 0 || json.Unmarshal(e.Result, &n) != nil {
			return "", "", false
		}
		if n.Priority != agentcore.PriorityUrgent && n.Priority != agentcore.PriorityHigh {
			return "", "", false
		}
		return fmt.Sprintf("%s · %s (%s)", n.Source, n.Kind, n.Priority), n.Summary, true
	case agentcore.EventToolApproval:
		return "Parley asks to run " + e.ToolName, "In " + thread + ": allow or deny it.", true
	case agentcore.EventToolSuspended:
		var p struct {
			Question string `json:"question"`
			Title    string `json:"title"`
		}
		_ = json.Unmarshal(e.Result, &p)
		switch {
		case p.Question != "":
			return "Parley has a question", p.Question, true
		case e.ToolName == "submit_plan":
			return "A plan waits for your review", "In " + thread + ".", true
		}
		return "Parley waits for you", "In " + thread + ".", true
	}
	return "", "", false
}
