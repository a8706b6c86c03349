package toolkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"parley/agentcore"
)

// Limits of web_fetch, Mastra's constants (spec §1.4).
const (
	// webFetchMaxChars bounds the page text so one fetch cannot flood the
	// model's context. Counted in Unicode code points (runes), not in
	// UTF-16 units as JS's string length does: the cut then never splits a
	// character, and for text in the Basic Multilingual Plane the two agree.
	// Text made of astral characters (emoji) may thus hold up to 200,000
	// UTF-16 units.
	webFetchMaxChars = 100_000
	// webFetchMaxRedirects is how many redirects one fetch follows.
	webFetchMaxRedirects = 5
	// webFetchTimeout is the deadline of the whole fetch: every hop and the
	// body. It also bounds a stalled socket, Mastra's per-request timeout.
	webFetchTimeout = 15 * time.Second

	webFetchUserAgent = "Mastra Web Fetch Tool/1.0"
	webFetchAccept    = "text/html,text/plain,application/json,application/xml;q=0.9,*/*;q=0.8"
)

const webFetchDescription = "Fetch a web page by URL and return text content with basic response metadata."

var (
	webFetchInputSchema  = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","minLength":1,"description":"The fully qualified HTTP or HTTPS URL to fetch."}},"required":["url"]}`)
	webFetchOutputSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"content":{"type":"string"},"truncated":{"type":"boolean"},"status":{"type":"number"},"statusText":{"type":"string"},` +
		`"contentType":{"type":["string","null"]},"url":{"type":"string"},"ok":{"type":"boolean"},"isError":{"type":"boolean"}` +
		`},"required":["content"]}`)
)

// WebFetchResult is web_fetch's output. A failure carries only Content
// ("Failed to fetch URL: <reason>") and IsError, and is marshalled as
// {content, isError}; any response, 2xx or not, carries the rest.
type WebFetchResult struct {
	Content    string `json:"content"`
	Truncated  bool   `json:"truncated"`
	Status     int    `json:"status"`
	StatusText string `json:"statusText"`
	// ContentType is the first Content-Type of the response; nil (JSON
	// null) when it had none.
	ContentType *string `json:"contentType"`
	URL         string  `json:"url"` // after redirects
	OK          bool    `json:"ok"`  // status 2xx
	IsError     bool    `json:"isError,omitempty"`
}

// MarshalJSON gives a failure Mastra's shape, without response fields.
func (r WebFetchResult) MarshalJSON() ([]byte, error) {
	if r.IsError {
		return json.Marshal(Result{Content: r.Content, IsError: true})
	}
	type plain WebFetchResult // no MarshalJSON: no recursion
	return json.Marshal(plain(r))
}

// fetchFailure is a reason the model is given after "Failed to fetch URL: ".
// Dial and lookup errors wrap it, so errors.As finds it under net errors.
type fetchFailure string

func (e fetchFailure) Error() string { return string(e) }

// Mastra's exact reasons.
const (
	reasonNotHTTP        fetchFailure = "only HTTP and HTTPS URLs are supported."
	reasonPrivate        fetchFailure = "URL resolves to a private or reserved address."
	reasonRedirectScheme fetchFailure = "Redirect target must use HTTP or HTTPS."
	// reasonInvalidURL is Node's message for a Location new URL() rejects.
	reasonInvalidURL fetchFailure = "Invalid URL"
)

// netResolver is the lookup web_fetch resolves host names with;
// *net.Resolver is one.
type netResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// WebFetchOption adjusts web_fetch. The options exist for tests (a stub
// DNS, a reachable test server, a short deadline) and none is exported, so
// no caller outside this package can weaken the address checks.
type WebFetchOption func(*webFetcher)

// withResolver makes web_fetch resolve names with r instead of the system
// resolver.
func withResolver(r netResolver) WebFetchOption { return func(f *webFetcher) { f.resolver = r } }

// withAllowAddr lets web_fetch connect to the addresses allow accepts even
// if they are blocked: a test's own server on loopback. It takes the port
// too, so http://127.0.0.1 (port 80) stays blocked while the test server
// is reachable.
func withAllowAddr(allow func(netip.AddrPort) bool) WebFetchOption {
	return func(f *webFetcher) { f.allow = allow }
}

// withTimeout replaces the 15 s deadline.
func withTimeout(d time.Duration) WebFetchOption { return func(f *webFetcher) { f.timeout = d } }

// WebFetchTool is Mastra's webFetchTool (spec §1.4): GET an http(s) URL
// and return its body as text (up to 100,000 characters) with the status,
// the content type and the final URL.
//
// It refuses to reach private or reserved addresses (SSRF): a literal IP in
// the URL, in any notation a URL parser reads as one (0x7f.1, 2130706433,
// 127.1, [::ffff:127.0.0.1]), an IPv6 address carrying a blocked IPv4 one
// ([::127.0.0.1], [64:ff9b::7f00:1], [2002:7f00:1::], Teredo), localhost
// names, any host whose DNS answers include a blocked address, and —
// checked again on the socket itself — any address actually dialled. Each
// redirect hop is checked the same way. A name is looked up once per hop
// and the checked answers are dialled by address, so DNS cannot rebind
// between the check and the connection.
// Failures are results for the model; only the caller's cancellation is an
// error.
func WebFetchTool(opts ...WebFetchOption) *agentcore.Tool {
	f := newWebFetcher(opts...)
	return &agentcore.Tool{
		ID:           "web_fetch",
		Description:  webFetchDescription,
		InputSchema:  webFetchInputSchema,
		OutputSchema: webFetchOutputSchema,
		// The model sees a failure as an error and a response whole, with
		// its metadata, as Mastra's model does.
		ToModelOutput: func(out any) agentcore.ModelOutput {
			if r, ok := out.(WebFetchResult); ok && r.IsError {
				return agentcore.ModelOutput{Type: "error-text", Value: r.Content}
			}
			return agentcore.ModelOutput{Type: "json", Value: out}
		},
		Execute: f.execute,
	}
}

type webFetcher struct {
	resolver  netResolver
	allow     func(netip.AddrPort) bool
	timeout   time.Duration
	dialer    *net.Dialer
	transport *http.Transport
}

func newWebFetcher(opts ...WebFetchOption) *webFetcher {
	f := &webFetcher{resolver: net.DefaultResolver, timeout: webFetchTimeout}
	for _, o := range opts {
		o(f)
	}
	// Control sees the address of the socket about to connect, after every
	// lookup: the last word on where a fetch goes, whatever resolved it.
	f.dialer = &net.Dialer{Control: f.control}
	f.transport = &http.Transport{
		// No proxy: a proxy would connect on our behalf, past the checks.
		Proxy:       nil,
		DialContext: f.dial,
		// Every fetch dials afresh, so every connection is checked; no
		// pooled connection outlives the fetch that checked it.
		DisableKeepAlives: true,
		// Mastra sends no accept-encoding; only its two headers go out.
		DisableCompression:     true,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return f
}

func (f *webFetcher) execute(ctx context.Context, raw json.RawMessage, _ *agentcore.ToolContext) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = webFetchFailed(fmt.Sprint(p)), nil
		}
	}()
	var in struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return webFetchFailed(err.Error()), nil
	}
	u, err := parseFetchURL(in.URL)
	if err != nil {
		return webFetchFailed(string(reasonNotHTTP)), nil
	}
	timedOut := timedOutReason(f.timeout)
	dctx, cancel := context.WithTimeoutCause(ctx, f.timeout, timedOut)
	defer cancel()
	res, err := f.fetch(dctx, u)
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		// The caller gave up (the run was stopped): not the model's concern.
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), context.Cause(ctx))
	}
	var reason fetchFailure
	switch {
	case errors.As(err, &reason):
		return webFetchFailed(string(reason)), nil
	case dctx.Err() != nil:
		return webFetchFailed(string(timedOut)), nil
	}
	return webFetchFailed(err.Error()), nil
}

func timedOutReason(d time.Duration) fetchFailure {
	return fetchFailure(fmt.Sprintf("Request timed out after %dms.", d.Milliseconds()))
}

func webFetchFailed(reason string) WebFetchResult {
	return WebFetchResult{Content: "Failed to fetch URL: " + reason, IsError: true}
}

// fetch GETs u, following redirects itself so that every hop is checked.
func (f *webFetcher) fetch(ctx context.Context, u *url.URL) (WebFetchResult, error) {
	for redirects := 0; ; redirects++ {
		if err := f.checkHost(u); err != nil {
			return WebFetchResult{}, err
		}
		resp, err := f.get(ctx, u)
		if err != nil {
			return WebFetchResult{}, err
		}
		loc := resp.Header.Get("Location")
		if loc == "" || resp.StatusCode < 300 || resp.StatusCode > 399 {
			return readFetchResponse(resp, u)
		}
		resp.Body.Close()
		if redirects == webFetchMaxRedirects {
			return WebFetchResult{}, fetchFailure(fmt.Sprintf("Too many redirects. Maximum is %d.", webFetchMaxRedirects))
		}
		next, err := u.Parse(loc) // a relative Location is relative to this hop
		if err != nil {
			return WebFetchResult{}, reasonInvalidURL
		}
		if u, err = normalizeFetchURL(next); err != nil {
			if errors.Is(err, reasonNotHTTP) {
				return WebFetchResult{}, reasonRedirectScheme
			}
			return WebFetchResult{}, err
		}
	}
}

func (f *webFetcher) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", webFetchUserAgent)
	req.Header.Set("Accept", webFetchAccept)
	if u.User != nil { // Node sends a URL's credentials; the bare transport would not
		pw, _ := u.User.Password()
		req.SetBasicAuth(u.User.Username(), pw)
	}
	return f.transport.RoundTrip(req)
}

func readFetchResponse(resp *http.Response, u *url.URL) (WebFetchResult, error) {
	defer resp.Body.Close()
	content, truncated, err := readFetchBody(resp.Body, webFetchMaxChars)
	if err != nil {
		return WebFetchResult{}, err
	}
	var contentType *string
	if v := resp.Header.Values("Content-Type"); len(v) > 0 {
		contentType = &v[0]
	}
	// Status is "200 OK" as the server sent it; Node's statusMessage is the
	// reason alone ("" if the server sent none).
	statusText := strings.TrimPrefix(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)), " ")
	return WebFetchResult{
		Content:     content,
		Truncated:   truncated,
		Status:      resp.StatusCode,
		StatusText:  statusText,
		ContentType: contentType,
		URL:         u.String(),
		OK:          resp.StatusCode >= 200 && resp.StatusCode < 300,
	}, nil
}

// readFetchBody decodes r as UTF-8 as TextDecoder does (a leading BOM
// dropped, invalid bytes as U+FFFD) and stops once it has more than max
// characters, returning the first max with truncated set. The rest of the
// body is never read.
func readFetchBody(r io.Reader, max int) (content string, truncated bool, err error) {
	br := bufio.NewReaderSize(r, 32<<10)
	var b strings.Builder
	for n, first := 0, true; ; first = false {
		c, _, err := br.ReadRune()
		if err == io.EOF {
			return b.String(), false, nil
		}
		if err != nil {
			return "", false, err
		}
		if first && c == '\uFEFF' {
			continue
		}
		if n == max {
			return b.String(), true, nil
		}
		b.WriteRune(c)
		n++
	}
}

// checkHost refuses localhost names and blocked literal addresses before
// any connection is made.
func (f *webFetcher) checkHost(u *url.URL) error {
	host := strings.TrimSuffix(u.Hostname(), ".") // localhost. is localhost
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return reasonPrivate
	}
	if ip, err := netip.ParseAddr(host); err == nil && f.blocked(netip.AddrPortFrom(ip, fetchPort(u))) {
		return reasonPrivate
	}
	return nil
}

// dial resolves the host, refuses it if ANY answer is blocked (as
// Mastra's lookup does: one private answer among public ones is enough),
// then connects to the checked answers in turn; the socket's Control
// checks each once more.
func (f *webFetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %s: %w", addr, err)
	}
	ips := []netip.Addr{}
	if ip, perr := netip.ParseAddr(host); perr == nil {
		ips = append(ips, ip)
	} else if ips, err = f.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	for _, ip := range ips {
		if f.blocked(netip.AddrPortFrom(ip, uint16(port))) {
			return nil, reasonPrivate
		}
	}
	var errs []error
	for _, ip := range ips {
		// Dial the checked address, never the name: a second lookup could
		// answer differently (DNS rebinding).
		c, err := f.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control is the dialer's last check, on the address the socket is about
// to connect to.
func (f *webFetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || f.blocked(ap) {
		return reasonPrivate // fail closed on an address we cannot read
	}
	return nil
}

func (f *webFetcher) blocked(ap netip.AddrPort) bool {
	if f.allow != nil && f.allow(ap) {
		return false
	}
	return blockedAddr(ap.Addr())
}

// Mastra's blocked ranges (spec §1.4), and 100::/64 (RFC 6666,
// discard-only: nothing legitimate is ever fetched from it).
var (
	blockedV4 = mustPrefixes(
		"0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/3", // first octet ≥ 224: multicast and reserved
	)
	blockedV6 = mustPrefixes("::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "100::/64")
)

// IPv6 ranges whose addresses carry an IPv4 address a packet to them may
// end up at, through the host's own stack or a translator or relay on the
// way. (IPv4-mapped ::ffff:0:0/96 is unmapped before these are asked.)
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")           // RFC 4291 §2.5.5.1: ::a.b.c.d
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 (SIIT): ::ffff:0:a.b.c.d
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052: the last 32 bits
	nat64LocalUse  = netip.MustParsePrefix("64:ff9b:1::/48")  // RFC 8215: layout chosen by the network
	sixToFour      = netip.MustParsePrefix("2002::/16")       // RFC 3056: bits 16-47
	teredo         = netip.MustParsePrefix("2001::/32")       // RFC 4380: server bits 32-63, client last 32 inverted
)

func mustPrefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// blockedAddr reports whether ip is in a blocked range. An IPv6 address
// that carries an IPv4 address (IPv4-mapped, -compatible or -translated,
// NAT64, 6to4, Teredo) is blocked as well when that IPv4 address is.
func blockedAddr(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return inRanges(ip, blockedV4)
	}
	if inRanges(ip, blockedV6) {
		return true
	}
	for _, v4 := range embeddedV4(ip) {
		if inRanges(v4, blockedV4) {
			return true
		}
	}
	return false
}

func inRanges(ip netip.Addr, ranges []netip.Prefix) bool {
	for _, p := range ranges {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// embeddedV4 is every IPv4 address the IPv6 address ip carries, nil for
// one that carries none.
func embeddedV4(ip netip.Addr) []netip.Addr {
	b := ip.As16()
	at := func(i, j, k, l int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[j], b[k], b[l]}) }
	switch {
	case ipv4Compatible.Contains(ip), ipv4Translated.Contains(ip), nat64WellKnown.Contains(ip):
		return []netip.Addr{at(12, 13, 14, 15)}
	case nat64LocalUse.Contains(ip):
		// The prefix length inside the /48 — and so where the IPv4 address
		// sits (RFC 6052 §2.2, bits 64-71 skipped) — is the local
		// network's choice, which we cannot see: every reading is judged,
		// and one blocked reading refuses the address.
		return []netip.Addr{at(6, 7, 9, 10), at(7, 9, 10, 11), at(9, 10, 11, 12), at(12, 13, 14, 15)}
	case sixToFour.Contains(ip):
		return []netip.Addr{at(2, 3, 4, 5)}
	case teredo.Contains(ip):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{at(4, 5, 6, 7), netip.AddrFrom4(client)}
	}
	return nil
}

// fetchPort is u's port, or its scheme's default.
func fetchPort(u *url.URL) uint16 {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// parseFetchURL parses the model's URL the way JS's new URL() reads it.
func parseFetchURL(raw string) (*url.URL, error) {
	// new URL() strips leading and trailing C0 controls and spaces.
	raw = strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	u, err := url.Parse(raw)
	if err != nil {
		return nil, reasonInvalidURL
	}
	return normalizeFetchURL(u)
}

// normalizeFetchURL checks that u is an http(s) URL with a host and gives
// it the host a WHATWG URL parser (JS's new URL()) would: IDNA-mapped,
// lower case, and a host that parses as an IPv4 number in any notation
// rewritten as a dotted quad — so the checks and the connection see the
// address the URL really names, and "url" in the result reads as in
// Mastra. Errors: reasonNotHTTP for another scheme, reasonInvalidURL for
// what new URL() would reject.
func normalizeFetchURL(u *url.URL) (*url.URL, error) {
	n := *u
	if n.Scheme != "http" && n.Scheme != "https" {
		return nil, reasonNotHTTP
	}
	if n.Opaque != "" || n.Host == "" {
		return nil, reasonInvalidURL
	}
	port := n.Port()
	if port != "" {
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, reasonInvalidURL
		}
		if (n.Scheme == "http" && p == 80) || (n.Scheme == "https" && p == 443) {
			port = ""
		}
	}
	host, err := canonicalHost(n.Hostname(), strings.HasPrefix(n.Host, "["))
	if err != nil {
		return nil, err
	}
	n.Host = host
	if port != "" {
		n.Host += ":" + port
	}
	if n.Path == "" {
		n.Path, n.RawPath = "/", ""
	}
	return &n, nil
}

func canonicalHost(host string, bracketed bool) (string, error) {
	if bracketed {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", reasonInvalidURL
		}
		return "[" + ip.String() + "]", nil
	}
	if host == "" {
		return "", reasonInvalidURL
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			// The mapping Go's transport would apply too (full-width digits
			// become ASCII digits, so １２７.０.０.１ is 127.0.0.1).
			a, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return "", reasonInvalidURL
			}
			host = a
			break
		}
	}
	host = strings.ToLower(host)
	if endsInNumber(host) {
		ip, ok := parseIPv4Host(host)
		if !ok {
			return "", reasonInvalidURL
		}
		return ip.String(), nil
	}
	return host, nil
}

// hostParts splits a host on dots, dropping one trailing empty label.
func hostParts(host string) []string {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// endsInNumber is the WHATWG URL test for a host to be read as IPv4: its
// last label is a number (decimal, 0x hex or 0 octal).
func endsInNumber(host string) bool {
	parts := hostParts(host)
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Host is the WHATWG IPv4 parser (as inet_aton): one to four
// numbers, the last filling the bytes the others leave, so 127.1,
// 0x7f.0.0.1, 017700000001 and 2130706433 are all 127.0.0.1.
func parseIPv4Host(host string) (netip.Addr, bool) {
	parts := hostParts(host)
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = v
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number reads one label as the WHATWG IPv4 number parser does.
// A number too large for 64 bits is still a number (and out of range).
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true // "0x" is zero
	}
	v, err := strconv.ParseUint(s, base, 64)
	if errors.Is(err, strconv.ErrRange) {
		return math.MaxUint64, true
	}
	return v, err == nil
}
