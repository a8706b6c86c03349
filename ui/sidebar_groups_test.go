package ui

import (
	"testing"
	"time"
)

// A chat's sidebar group follows the calendar day of its last message in
// the local zone, not 24-hour spans: a chat from 23:50 is Yesterday at 00:10.
func TestThreadGroup(t *testing.T) {
	at := func(y int, m time.Month, d, h, min int) time.Time {
		return time.Date(y, m, d, h, min, 0, 0, time.Local)
	}
	now := at(2025, time.March, 10, 0, 10)
	for _, tc := range []struct {
		at     time.Time
		pinned bool
		id     string
		label  string
	}{
		{at(2020, time.May, 1, 9, 0), true, "pinned", "Pinned"},
		{at(2025, time.March, 10, 0, 5), false, "today", "Today"},
		{at(2025, time.March, 10, 9, 0), false, "today", "Today"}, // another machine's clock, ahead
		{at(2025, time.March, 9, 23, 50), false, "yesterday", "Yesterday"},
		{at(2025, time.March, 8, 12, 0), false, "week", "Previous 7 days"},
		{at(2025, time.March, 3, 0, 1), false, "week", "Previous 7 days"},
		{at(2025, time.March, 2, 23, 59), false, "month", "Previous 30 days"},
		{at(2025, time.February, 8, 8, 0), false, "month", "Previous 30 days"},
		{at(2025, time.February, 7, 8, 0), false, "month-2025-02", "February"},
		{at(2025, time.January, 31, 8, 0), false, "month-2025-01", "January"},
		{at(2024, time.December, 31, 8, 0), false, "month-2024-12", "December 2024"},
	} {
		id, label := threadGroup(tc.pinned, tc.at, now)
		if id != tc.id || label != tc.label {
			t.Errorf("%s (pinned %v): %s %q, want %s %q", tc.at.Format(time.DateTime), tc.pinned, id, label, tc.id, tc.label)
		}
	}
}
