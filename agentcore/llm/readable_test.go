package llm

import (
	"net/http"
	"strings"
	"testing"
)

const gatewayPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>502 Bad Gateway &amp; friends</title>
<style>body{font:14px sans-serif}</style></head>
<body><h1>Bad Gateway</h1><p>The proxy could not reach the upstream server.</p><script>alert(1)</script></body></html>`

// A provider behind a proxy that answers with a web page gets a sentence a
// person can read: what came, its status and the page's title, never the
// page itself.
func TestHTMLPageIsSummarised(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		want   string
	}{
		{"error page", http.StatusBadGateway, "openai: the provider answered with an HTML page (HTTP 502 Bad Gateway: 502 Bad Gateway & friends) instead of a stream"},
		{"page with 200", http.StatusOK, "openai: the provider answered with an HTML page (HTTP 200 OK: 502 Bad Gateway & friends) instead of a stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(c.status)
				w.Write([]byte(gatewayPage))
			})
			_, err := collect(t, openAt(t, srv, Config{MaxRetries: -1}), hello)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v\nwant  %s", err, c.want)
			}
			if strings.Contains(err.Error(), "<") {
				t.Fatalf("the page's markup reached the message: %v", err)
			}
		})
	}
}

// An event larger than the stream reader takes is named with the limit.
func TestOversizeEventIsNamed(t *testing.T) {
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request, n int, _ <-chan struct{}) {
		startSSE(w)
		send(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\""+strings.Repeat("a", 33<<20)+"\"}}]}\n\n")
	})
	_, err := collect(t, openAt(t, srv, Config{MaxRetries: -1}), hello)
	const want = "openai: the provider sent a stream event over 32 MiB, more than Parley reads"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v\nwant  %s", err, want)
	}
}
