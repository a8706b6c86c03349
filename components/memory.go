package components

import "fmt"

// memoryState says how big the working memory is and when it changed.
func memoryState(m MemoryView) string {
	s := fmt.Sprintf("%d of %d bytes", len(m.Text), m.Limit)
	if m.Updated != "" {
		s += ", updated " + m.Updated
	}
	return s + "."
}
