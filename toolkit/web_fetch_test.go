package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"parley/agentcore"
)

// stubDNS answers lookups from a table and never reaches a real resolver.
// A host with several answer sets gives them in turn (the last repeats):
// a name that rebinds between lookups.
type stubDNS struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func (s *stubDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sets, ok := s.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(s.calls[host], len(sets)-1)
	s.calls[host]++
	return sets[i], nil
}

func mustAddrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// fetchServer is the test's own server, on loopback, which web_fetch may
// reach only through withAllowAddr.
type fetchServer struct {
	*httptest.Server
	addr netip.AddrPort
	port string
	dns  *stubDNS
}

func newFetchServer(t *testing.T) *fetchServer {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "%s|%s|%s|%s", r.Header.Get("User-Agent"), r.Header.Get("Accept"), r.Header.Get("Accept-Encoding"), r.Host)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("loc"))
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			fmt.Fprint(w, "done")
			return
		}
		http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<h1>nope</h1>")
	})
	mux.HandleFunc("/nolocation", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMultipleChoices)
		fmt.Fprint(w, "choose")
	})
	mux.HandleFunc("/twotypes", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{"application/json", "text/plain"}
		fmt.Fprint(w, `{"a":1}`)
	})
	mux.HandleFunc("/notype", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no sniffed type either
		fmt.Fprint(w, "bare")
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/stallbody", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "partial")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/text/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		body := []byte(multiByteText(n))
		// Odd-sized flushed chunks split multi-byte characters between reads.
		for len(body) > 0 {
			k := min(4099, len(body))
			w.Write(body[:k])
			w.(http.Flusher).Flush()
			body = body[k:]
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	return &fetchServer{
		Server: srv,
		addr:   ap,
		port:   strconv.Itoa(int(ap.Port())),
		dns:    &stubDNS{answers: map[string][][]netip.Addr{}, calls: map[string]int{}},
	}
}

// tool is web_fetch as production builds it, except for the stub DNS and
// the one loopback address:port it may reach.
func (s *fetchServer) tool(opts ...WebFetchOption) *agentcore.Tool {
	allow := func(ap netip.AddrPort) bool { return ap.Addr().Unmap() == s.addr.Addr() && ap.Port() == s.addr.Port() }
	return WebFetchTool(append([]WebFetchOption{withResolver(s.dns), withAllowAddr(allow)}, opts...)...)
}

// multiByteText is n characters of 1-, 2-, 3- and 4-byte UTF-8.
func multiByteText(n int) string {
	cycle := []rune("aé界😀")
	var b strings.Builder
	for i := range n {
		b.WriteRune(cycle[i%len(cycle)])
	}
	return b.String()
}

func runFetch(t *testing.T, ctx context.Context, tool *agentcore.Tool, rawURL string) (any, error) {
	t.Helper()
	input, _ := json.Marshal(map[string]string{"url": rawURL})
	if err := tool.ValidateInput(input); err != nil {
		t.Fatalf("input %s: %v", input, err)
	}
	out, err := tool.Execute(ctx, input, &agentcore.ToolContext{})
	if err == nil {
		if verr := tool.ValidateOutput(out); verr != nil {
			t.Errorf("output does not match the output schema: %v", verr)
		}
	}
	return out, err
}

func ctype(s string) *string { return &s }

const (
	wantPrivate = "Failed to fetch URL: URL resolves to a private or reserved address."
	wantNotHTTP = "Failed to fetch URL: only HTTP and HTTPS URLs are supported."
)

func TestWebFetch(t *testing.T) {
	s := newFetchServer(t)
	s.dns.answers["internal.test"] = [][]netip.Addr{mustAddrs("10.0.0.5")}
	s.dns.answers["v6internal.test"] = [][]netip.Addr{mustAddrs("fd00::5")}
	s.dns.answers["mapped.test"] = [][]netip.Addr{mustAddrs("::ffff:192.168.0.5")}
	s.dns.answers["metadata.test"] = [][]netip.Addr{mustAddrs("169.254.169.254")}
	// One answer is the (reachable) test server, one is private: refused.
	s.dns.answers["mixed.test"] = [][]netip.Addr{mustAddrs("127.0.0.1", "10.0.0.6")}
	s.dns.answers["site.test"] = [][]netip.Addr{mustAddrs("127.0.0.1")}
	// Answers the test server first, then a private address.
	s.dns.answers["rebind.test"] = [][]netip.Addr{mustAddrs("127.0.0.1"), mustAddrs("10.0.0.7")}
	base := s.URL
	hostURL := func(host, path string) string { return "http://" + host + ":" + s.port + path }
	headers := "Mastra Web Fetch Tool/1.0|text/html,text/plain,application/json,application/xml;q=0.9,*/*;q=0.8||"

	cases := []struct {
		name string
		url  string
		want WebFetchResult
	}{
		// Scheme.
		{"ftp", "ftp://example.com/file", webFetchFailed("only HTTP and HTTPS URLs are supported.")},
		{"file", "file:///etc/passwd", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"javascript", "javascript:alert(1)", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"not a URL", "not a url", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"no host", "http://", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"invalid IPv4 (new URL rejects it)", "http://1.2.3.4.5/", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"IPv4 part out of range", "http://256.1.1.1/", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"port out of range", "http://example.com:70000/", WebFetchResult{Content: wantNotHTTP, IsError: true}},

		// SSRF: literal addresses in every notation, and names.
		{"loopback", "http://127.0.0.1", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"loopback https", "https://127.0.0.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"loopback other port", "http://127.0.0.1:" + strconv.Itoa(int(s.addr.Port())+1) + "/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv6 loopback", "http://[::1]", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv6 loopback long form", "http://[0:0:0:0:0:0:0:1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv6 unspecified", "http://[::]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"hex and short", "http://0x7f.1", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"one decimal number", "http://2130706433", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"one octal number", "http://017700000001", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"short form", "http://127.1", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"octal parts", "http://0177.0.0.01/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"trailing dot", "http://127.0.0.1./", WebFetchResult{Content: wantPrivate, IsError: true}},
		// Go's URL parser rejects %-escaped ASCII in a host, where new URL()
		// decodes it: refused either way, only the reason differs.
		{"percent-encoded", "http://%31%32%37.0.0.1/", WebFetchResult{Content: wantNotHTTP, IsError: true}},
		{"full-width digits", "http://１２７．０．０．１/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv4-mapped dotted", "http://[::ffff:127.0.0.1]", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv4-mapped hex", "http://[::ffff:7f00:1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv4-mapped metadata", "http://[::ffff:a9fe:a9fe]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"10/8", "http://10.1.2.3/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"172.16/12 low", "http://172.16.0.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"172.16/12 high", "http://172.31.255.255/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"192.168/16", "http://192.168.1.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"100.64/10", "http://100.64.0.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"100.64/10 high", "http://100.127.255.254/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"198.18/15", "http://198.18.0.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"198.18/15 high", "http://198.19.255.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"0/8", "http://0.0.0.0/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"0 as one number", "http://0/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"192.0.0/24", "http://192.0.0.8/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"TEST-NET-1", "http://192.0.2.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"TEST-NET-2", "http://198.51.100.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"TEST-NET-3", "http://203.0.113.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"multicast", "http://224.0.0.1/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"broadcast", "http://255.255.255.255/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"unique local", "http://[fc00::1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"unique local fd", "http://[fd12:3456::1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"link local", "http://[fe80::1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"link local high", "http://[febf::1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"IPv6 multicast", "http://[ff02::1]/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"localhost", "http://localhost/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"localhost upper case", "http://LOCALHOST:" + s.port + "/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"localhost trailing dot", "http://localhost./", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"sub.localhost", "http://foo.localhost/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"name answering private", "http://internal.test/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"name answering private IPv6", "http://v6internal.test/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"name answering IPv4-mapped private", "http://mapped.test/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"name answering metadata", "http://metadata.test/latest/meta-data", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"name with one public and one private answer", hostURL("mixed.test", "/headers"), WebFetchResult{Content: wantPrivate, IsError: true}},

		// Redirects.
		{"redirect to private", base + "/to?loc=http://169.254.169.254/latest/meta-data", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"redirect to loopback", base + "/to?loc=http://127.0.0.1/admin", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"redirect to hex loopback", base + "/to?loc=http://0x7f000001/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"redirect to name answering private", base + "/to?loc=http://internal.test/", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"redirect to localhost", base + "/to?loc=http://localhost:" + s.port + "/headers", WebFetchResult{Content: wantPrivate, IsError: true}},
		{"redirect to file", base + "/to?loc=file:///etc/passwd", WebFetchResult{Content: "Failed to fetch URL: Redirect target must use HTTP or HTTPS.", IsError: true}},
		{"redirect to ftp", base + "/to?loc=ftp://example.com/", WebFetchResult{Content: "Failed to fetch URL: Redirect target must use HTTP or HTTPS.", IsError: true}},
		{"redirect to invalid URL", base + "/to?loc=http://1.2.3.4.5/", WebFetchResult{Content: "Failed to fetch URL: Invalid URL", IsError: true}},
		{"six redirects", base + "/hop/6", WebFetchResult{Content: "Failed to fetch URL: Too many redirects. Maximum is 5.", IsError: true}},
		{"five redirects", base + "/hop/5", WebFetchResult{Content: "done", Status: 200, StatusText: "OK", ContentType: ctype("text/plain; charset=utf-8"), URL: base + "/hop/0", OK: true}},
		{"relative redirect", base + "/to?loc=headers", WebFetchResult{Content: headers + s.addr.String(), Status: 200, StatusText: "OK", ContentType: ctype("text/plain; charset=utf-8"), URL: base + "/headers", OK: true}},
		{"absolute-path redirect", base + "/to?loc=/hop/0", WebFetchResult{Content: "done", Status: 200, StatusText: "OK", ContentType: ctype("text/plain; charset=utf-8"), URL: base + "/hop/0", OK: true}},
		// Every hop resolves again and is checked again.
		{"name rebinding to private between hops", hostURL("rebind.test", "/to?loc=/headers"), WebFetchResult{Content: wantPrivate, IsError: true}},

		// Responses.
		{"headers sent", base + "/headers", WebFetchResult{Content: headers + s.addr.String(), Status: 200, StatusText: "OK", ContentType: ctype("text/plain; charset=utf-8"), URL: base + "/headers", OK: true}},
		{"name answering the server", hostURL("SITE.test", "/headers"), WebFetchResult{Content: headers + "site.test:" + s.port, Status: 200, StatusText: "OK", ContentType: ctype("text/plain; charset=utf-8"), URL: hostURL("site.test", "/headers"), OK: true}},
		{"non-2xx is not an error", base + "/missing", WebFetchResult{Content: "<h1>nope</h1>", Status: 404, StatusText: "Not Found", ContentType: ctype("text/html"), URL: base + "/missing", OK: false}},
		{"3xx without Location is a response", base + "/nolocation", WebFetchResult{Content: "choose", Status: 300, StatusText: "Multiple Choices", ContentType: ctype("text/plain; charset=utf-8"), URL: base + "/nolocation", OK: false}},
		{"first content type", base + "/twotypes", WebFetchResult{Content: `{"a":1}`, Status: 200, StatusText: "OK", ContentType: ctype("application/json"), URL: base + "/twotypes", OK: true}},
		{"no content type is null", base + "/notype", WebFetchResult{Content: "bare", Status: 200, StatusText: "OK", URL: base + "/notype", OK: true}},
		{"empty path reads as /", "  " + base + "\n", WebFetchResult{Content: "404 page not found\n", Status: 404, StatusText: "Not Found", ContentType: ctype("text/plain; charset=utf-8"), URL: base + "/", OK: false}},
	}
	tool := s.tool()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runFetch(t, t.Context(), tool, c.url)
			if err != nil {
				t.Fatalf("error %v, want a result", err)
			}
			got, ok := out.(WebFetchResult)
			if !ok {
				t.Fatalf("output %T", out)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(c.want)
			if string(gj) != string(wj) {
				t.Errorf("\ngot  %s\nwant %s", gj, wj)
			}
		})
	}
}

// The JSON shapes: a failure is {content, isError}; a response has every
// field, contentType null when absent. The model sees a failure as an
// error and a response as JSON.
func TestWebFetchShapes(t *testing.T) {
	tool := WebFetchTool()
	fail := webFetchFailed("only HTTP and HTTPS URLs are supported.")
	b, _ := json.Marshal(fail)
	if want := `{"content":"Failed to fetch URL: only HTTP and HTTPS URLs are supported.","isError":true}`; string(b) != want {
		t.Errorf("failure %s, want %s", b, want)
	}
	ok := WebFetchResult{Content: "x", Status: 204, URL: "http://example.com/", OK: true}
	b, _ = json.Marshal(ok)
	if want := `{"content":"x","truncated":false,"status":204,"statusText":"","contentType":null,"url":"http://example.com/","ok":true}`; string(b) != want {
		t.Errorf("response %s, want %s", b, want)
	}
	if mo := tool.ToModelOutput(fail); mo.Type != "error-text" || mo.Value != fail.Content {
		t.Errorf("failure to model: %+v", mo)
	}
	if mo := tool.ToModelOutput(ok); mo.Type != "json" {
		t.Errorf("response to model: %+v", mo)
	}
	if err := tool.ValidateInput(json.RawMessage(`{"url":""}`)); err == nil {
		t.Error("an empty url passed the input schema")
	}
}

func TestWebFetchTruncation(t *testing.T) {
	s := newFetchServer(t)
	tool := s.tool()
	for _, c := range []struct {
		n         int
		truncated bool
	}{{99_999, false}, {100_000, false}, {100_001, true}, {250_000, true}} {
		t.Run(strconv.Itoa(c.n), func(t *testing.T) {
			out, err := runFetch(t, t.Context(), tool, s.URL+"/text/"+strconv.Itoa(c.n))
			if err != nil {
				t.Fatal(err)
			}
			r := out.(WebFetchResult)
			want := multiByteText(min(c.n, 100_000))
			if r.IsError || r.Truncated != c.truncated || r.Content != want {
				t.Errorf("n=%d: isError=%v truncated=%v, %d characters (want %d), valid UTF-8 %v",
					c.n, r.IsError, r.Truncated, utf8.RuneCountInString(r.Content), utf8.RuneCountInString(want), utf8.ValidString(r.Content))
			}
		})
	}
}

func TestWebFetchBodyDecoding(t *testing.T) {
	cases := []struct {
		name, body, want string
		max              int
		truncated        bool
	}{
		{"leading BOM dropped", "\uFEFFhi", "hi", 10, false},
		{"only one BOM dropped", "\uFEFF\uFEFFhi", "\uFEFFhi", 10, false},
		{"BOM later kept", "a\uFEFF", "a\uFEFF", 10, false},
		{"invalid bytes replaced", "a\xffb", "a\uFFFDb", 10, false},
		{"cut at max characters", "é界😀ab", "é界😀", 3, true},
		{"exactly max is whole", "é界😀", "é界😀", 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// One byte per read: every multi-byte character spans reads.
			got, truncated, err := readFetchBody(iotest.OneByteReader(strings.NewReader(c.body)), c.max)
			if err != nil || got != c.want || truncated != c.truncated {
				t.Errorf("got %q %v %v, want %q %v", got, truncated, err, c.want, c.truncated)
			}
		})
	}
}

func TestWebFetchTimeout(t *testing.T) {
	s := newFetchServer(t)
	tool := s.tool(withTimeout(200 * time.Millisecond))
	for _, path := range []string{"/stall", "/stallbody"} {
		t.Run(path, func(t *testing.T) {
			out, err := runFetch(t, t.Context(), tool, s.URL+path)
			if err != nil {
				t.Fatalf("error %v, want a result", err)
			}
			want := WebFetchResult{Content: "Failed to fetch URL: Request timed out after 200ms.", IsError: true}
			if out != want {
				t.Errorf("got %+v, want %+v", out, want)
			}
		})
	}
	if got := timedOutReason(webFetchTimeout); got != "Request timed out after 15000ms." {
		t.Errorf("default timeout text %q", got)
	}
}

// The caller stopping the run is an error, not a result for the model.
func TestWebFetchCallerCancel(t *testing.T) {
	s := newFetchServer(t)
	tool := s.tool()
	t.Run("during the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		out, err := runFetch(t, ctx, tool, s.URL+"/stall")
		if !errors.Is(err, context.Canceled) || out != nil {
			t.Errorf("got %v, %v; want context.Canceled", out, err)
		}
	})
	t.Run("before the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		out, err := runFetch(t, ctx, tool, s.URL+"/headers")
		if !errors.Is(err, context.Canceled) || out != nil {
			t.Errorf("got %v, %v; want context.Canceled", out, err)
		}
	})
}

// The socket-level check holds on its own: whatever reached the dialer, a
// blocked address is never connected to.
func TestWebFetchDialerControl(t *testing.T) {
	f := newWebFetcher()
	for _, addr := range []string{"127.0.0.1:1", "[::1]:1", "10.0.0.1:80", "[::ffff:127.0.0.1]:1", "169.254.169.254:80",
		"[::127.0.0.1]:1", "[64:ff9b::7f00:1]:1", "[2002:7f00:1::]:1", "[2001:0:4136:e378:8000:63bf:80ff:fffe]:1", "[100::1]:1"} {
		_, err := f.dialer.DialContext(t.Context(), "tcp", addr)
		if !errors.Is(err, reasonPrivate) {
			t.Errorf("dial %s: %v, want the private-address refusal", addr, err)
		}
	}
}

// blockedAddr is exactly the spec's ranges: their edges are blocked, the
// addresses next to them are not.
func TestWebFetchBlockedRanges(t *testing.T) {
	blocked := []string{
		"0.0.0.0", "0.255.255.255", "10.0.0.0", "10.255.255.255", "127.0.0.1", "127.255.255.255",
		"100.64.0.0", "100.127.255.255", "169.254.0.0", "169.254.255.255", "172.16.0.0", "172.31.255.255",
		"192.0.0.0", "192.0.0.255", "192.0.2.0", "192.0.2.255", "192.168.0.0", "192.168.255.255",
		"198.18.0.0", "198.19.255.255", "198.51.100.0", "198.51.100.255", "203.0.113.0", "203.0.113.255",
		"224.0.0.0", "239.255.255.255", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "::ffff:224.0.0.1",
		"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe80::", "febf:ffff::1", "ff00::", "ff02::1",
		"fe80::1%eth0",
		"::2", // IPv4-compatible 0.0.0.2
		"100::", "100::ffff:ffff:ffff:ffff",
	}
	allowed := []string{
		"1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
		"169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.0", "192.0.3.0",
		"192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "198.51.99.255", "198.51.101.0",
		"203.0.112.255", "203.0.114.0", "223.255.255.255", "8.8.8.8",
		"::808:808", "::ffff:8.8.8.8", "100:0:0:1::", "ff::ffff:ffff:ffff:ffff", "fbff:ffff::1", "fec0::1", "fe00::1", "2001:4860:4860::8888",
	}
	for _, s := range blocked {
		if !blockedAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s not blocked", s)
		}
	}
	for _, s := range allowed {
		if blockedAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s blocked", s)
		}
	}
}

// URLs read as JS's new URL() reads them: the host a WHATWG parser sees is
// the host checked and connected to.
func TestWebFetchURLNormalization(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://0x08.8.8.8", "http://8.8.8.8/"},
		{"http://134744072", "http://8.8.8.8/"},
		{"http://010.010.010.010/a", "http://8.8.8.8/a"},
		{"http://8.526344/", "http://8.8.8.8/"},
		{"http://1.256/", "http://1.0.1.0/"},
		{"HTTP://Example.COM", "http://example.com/"},
		{"http://example.com:80/a?b#c", "http://example.com/a?b#c"},
		{"https://example.com:443/", "https://example.com/"},
		{"https://example.com:8443", "https://example.com:8443/"},
		{"http://[2001:DB8::0:1]:8080/", "http://[2001:db8::1]:8080/"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://1.2.3.4.5/", ""},
		{"http://example.0x/", ""},
		{"http://1..2/", ""},
		{"http://0x100000000/", ""},
		{"http://99999999999999999999999/", ""},
		{"http://[127.0.0.1]/", ""},
		{"http://[fe80::1%25eth0]/", ""},
		{"http://example.com:99999/", ""},
	}
	for _, c := range cases {
		u, err := parseFetchURL(c.in)
		got := ""
		if err == nil {
			got = u.String()
		}
		if got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}
