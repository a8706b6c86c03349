package app

import (
	"bufio"
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"parley/agentcore"
	"parley/storage"
)

// notifyServer is a notification server on a private session bus: what
// the desktop's own (GNOME Shell, dunst, …) does, minus the popups.
type notifyServer struct {
	got chan [2]string
}

func (n *notifyServer) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n.got <- [2]string{summary, body}
	return 1, nil
}

// sessionBus starts a private dbus-daemon and returns its address.
func sessionBus(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatal("dbus-daemon is needed for the OS notification test (Debian package dbus-daemon; .ci/run installs it)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, "--session", "--nofork", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon gave no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

func TestOSNotificationsWhenNotFocused(t *testing.T) {
	addr := sessionBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)

	srvConn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srvConn.Close()
	server := &notifyServer{got: make(chan [2]string, 10)}
	if err := srvConn.Export(server, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := srvConn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own the notification name: %v %v", reply, err)
	}

	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	agent := &agentcore.Agent{ID: "a", Model: "none/none", DeliveryPolicy: &agentcore.DeliveryPolicy{Default: &agentcore.Decision{Action: agentcore.NotifyPersist}}}
	bus := agentcore.NewBus()
	rt := agentcore.NewRuntimeOn(db, bus, slog.Default(), agent)
	defer rt.Close()
	th, err := rt.CreateThread(t.Context(), agentcore.Thread{ResourceID: "r", Title: "Deploy"})
	if err != nil {
		t.Fatal(err)
	}

	alerter, err := newDBusAlerter()
	if err != nil {
		t.Fatal(err)
	}
	defer alerter.Close()
	var focused atomic.Bool
	asked := make(chan bool, 10) // the watcher asked whether a window has the focus
	isFocused := func() bool { f := focused.Load(); asked <- f; return f }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go watchAlerts(ctx, rt, isFocused, alerter, slog.Default())
	time.Sleep(50 * time.Millisecond) // subscribed

	notify := func(p agentcore.Priority, summary string) {
		t.Helper()
		if _, err := rt.Notify(t.Context(), agentcore.NotificationInput{Source: "ci", Kind: "deploy", Summary: summary, Priority: p}, agentcore.NotifyTarget{ThreadID: th.ID}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(summary, body string) {
		t.Helper()
		select {
		case got := <-server.got:
			if got[0] != summary || got[1] != body {
				t.Fatalf("notified %q / %q, want %q / %q", got[0], got[1], summary, body)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no OS notification for %q", body)
		}
	}
	notify(agentcore.PriorityUrgent, "Production is down")
	<-asked
	expect("ci · deploy (urgent)", "Production is down")

	// Low and medium ones wait in the inbox; so does anything while a
	// Parley window has the focus.
	notify(agentcore.PriorityLow, "A low one")
	notify(agentcore.PriorityMedium, "A medium one")
	focused.Store(true)
	notify(agentcore.PriorityHigh, "Seen on screen already")
	if f := <-asked; !f {
		t.Fatal("the watcher did not see the focus")
	}
	focused.Store(false)
	notify(agentcore.PriorityHigh, "Rollback finished")
	expect("ci · deploy (high)", "Rollback finished")

	// A question waits for the user.
	bus.Publish(agentcore.Event{Type: agentcore.EventToolSuspended, ThreadID: th.ID, ToolName: "ask_user", Result: []byte(`{"question":"Roll back to 1.4?"}`)})
	expect("Parley has a question", "Roll back to 1.4?")
	bus.Publish(agentcore.Event{Type: agentcore.EventToolApproval, ThreadID: th.ID, ToolName: "execute_command"})
	expect("Parley asks to run execute_command", "In “Deploy”: allow or deny it.")
	select {
	case got := <-server.got:
		t.Fatalf("unexpected notification %q", got)
	case <-time.After(100 * time.Millisecond):
	}
}
