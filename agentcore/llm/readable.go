package llm

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// Errors a person can read: a provider that answers with a web page (a
// proxy's or a captive portal's) or with an event too big to read is
// described by what happened, never by the page or the reader's error.

// sseMaxEvent is the longest line the SDKs' stream readers take
// (bufio.MaxScanTokenSize<<9 in openai-go and anthropic-sdk-go).
const sseMaxEvent = bufio.MaxScanTokenSize << 9

// htmlPageError is a successful-looking answer that was a web page.
type htmlPageError struct {
	status int
	title  string
}

func (e *htmlPageError) Error() string { return htmlPageText(e.status, e.title) }

// htmlPageText says that the provider answered with an HTML page.
func htmlPageText(status int, title string) string {
	what := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	if title != "" {
		what += ": " + title
	}
	return "the provider answered with an HTML page (" + what + ") instead of a stream"
}

var titlePattern = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// htmlTitle says whether body is an HTML page, and returns its title as
// plain text (entities resolved, spaces collapsed, at most 120 runes).
func htmlTitle(body string) (string, bool) {
	head := strings.ToLower(strings.TrimSpace(body[:min(len(body), 1024)]))
	if !strings.HasPrefix(head, "<!doctype html") && !strings.HasPrefix(head, "<html") && !strings.Contains(head, "<html") {
		return "", false
	}
	m := titlePattern.FindStringSubmatch(body)
	if m == nil {
		return "", true
	}
	title := strings.Join(strings.Fields(html.UnescapeString(m[1])), " ")
	if r := []rune(title); len(r) > 120 {
		title = string(r[:120]) + "…"
	}
	return title, true
}

// pageInstead reads a 2xx answer that says it is an HTML page and returns
// the error that names it; nil for anything else.
func pageInstead(resp *http.Response) error {
	if !strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "text/html") {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	title, _ := htmlTitle(string(b))
	return &htmlPageError{status: resp.StatusCode, title: title}
}
