package ui

import (
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"parley/agentcore"
)

// A client that keeps its connection to a chat's stream but stops reading
// does not hold the stream for ever: the first write that cannot go out in
// time ends it, its subscriptions close, and so does the connection.
func TestStreamEndsWhenClientStopsReading(t *testing.T) {
	s, db, bus := testServerOn(t, nil)
	s.cfg.StreamWriteTimeout = 200 * time.Millisecond
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	ctx := t.Context()
	th, err := s.rt.CreateThread(ctx, agentcore.Thread{ResourceID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	// A reply of about 1 MB: every re-render of it is a large write.
	big := strings.Repeat("lorem ipsum dolor sit amet ", 40_000)
	msg, err := db.AppendMessage(ctx, agentcore.Message{ThreadID: th.ID, ResourceID: th.ResourceID, Role: agentcore.RoleAssistant,
		Content: agentcore.Content{Format: 2, Parts: []agentcore.Part{{Type: "text", Text: big}}}, Status: agentcore.StatusComplete})
	if err != nil {
		t.Fatal(err)
	}

	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /t/%s/stream HTTP/1.1\r\nHost: 127.0.0.1:7777\r\n\r\n", th.ID)
	deadline := time.Now().Add(10 * time.Second)
	for bus.Subscribers(th.ID) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream never subscribed to the thread")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The reply changes again and again while the client reads nothing:
	// the buffers fill, a write blocks, its deadline passes.
	for bus.Subscribers(th.ID) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream is still open for a client that stopped reading")
		}
		bus.Publish(agentcore.Event{Type: agentcore.EventMessage, ThreadID: th.ID, MessageID: msg.ID})
		time.Sleep(30 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := io.Copy(io.Discard, conn); err != nil {
		t.Logf("read %d bytes", n)
		t.Fatalf("the connection stayed open after its stream ended: %v", err)
	}
}
