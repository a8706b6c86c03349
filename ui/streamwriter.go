package ui

import (
	"net/http"
	"time"
)

// DefaultStreamWriteTimeout bounds one write of a long-lived stream (Config.StreamWriteTimeout).
const DefaultStreamWriteTimeout = 15 * time.Second

// streamWriter arms a write deadline before each write and flush of a
// long-lived stream (a chat's, the inbox's, an API subscription): a client
// that keeps its connection but stops reading — a frozen tab, a stalled
// proxy — ends its stream with an error instead of holding the handler and
// the connection for ever. Between writes an idle stream waits as long as
// it likes.
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	written int64 // bytes so far: a chat stream's frame tells from it whether it patched a reply
}

func (s *Server) streamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: s.cfg.StreamWriteTimeout}
}

func (sw *streamWriter) arm() { _ = sw.rc.SetWriteDeadline(time.Now().Add(sw.timeout)) }

func (sw *streamWriter) Write(p []byte) (int, error) {
	sw.arm()
	n, err := sw.ResponseWriter.Write(p)
	sw.written += int64(n)
	return n, err
}

// FlushError is what http.ResponseController.Flush calls.
func (sw *streamWriter) FlushError() error {
	sw.arm()
	return sw.rc.Flush()
}

// Flush makes it an http.Flusher too; FlushError reports the error.
func (sw *streamWriter) Flush() { _ = sw.FlushError() }

func (sw *streamWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }
