package agentcore

import "testing"

// A signal's id becomes its stored message's id: one from outside is
// checked like any id Parley accepts, and a missing one is issued.
func TestNewSignalChecksID(t *testing.T) {
	for _, bad := range hostileIDs[:len(hostileIDs)-1] { // the last is "": issued below
		if _, err := NewSignal(Signal{ID: bad, Type: SignalUser, Contents: "hi"}); err == nil {
			t.Errorf("NewSignal took id %.40q", bad)
		}
	}
	s, err := NewSignal(Signal{ID: "sig_1", Type: SignalUser, Contents: "hi"})
	if err != nil || s.ID != "sig_1" {
		t.Fatalf("a valid id: %q, %v", s.ID, err)
	}
	s, err = NewSignal(Signal{Type: SignalUser, Contents: "hi"})
	if err != nil || !ValidID(s.ID) {
		t.Fatalf("an issued id: %q, %v", s.ID, err)
	}
}
