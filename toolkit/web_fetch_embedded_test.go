package toolkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
)

// The IPv4 addresses the embedded forms below carry: every one web_fetch
// must refuse, and public ones it must let through.
var (
	embeddedBlockedV4 = map[string]string{
		"loopback":    "127.0.0.1",
		"loopback-2":  "127.1.2.3",
		"private-10":  "10.1.2.3",
		"private-172": "172.16.0.1",
		"private-192": "192.168.1.1",
		"link-local":  "169.254.1.1",
		"metadata":    "169.254.169.254",
		"this-net":    "0.0.0.0",
		"cgnat":       "100.64.0.1",
		"multicast":   "224.0.0.1",
	}
	embeddedPublicV4 = map[string]string{
		"google-dns":     "8.8.8.8",
		"cloudflare-dns": "1.1.1.1",
		"example":        "93.184.216.34",
	}
)

// embedForms put an IPv4 address into each IPv6 form that leads a packet
// to it. They place the bytes themselves (not through the code under
// test), as RFC 4291 (compatible, mapped), RFC 2765 (translated), RFC 6052
// (NAT64), RFC 3056 (6to4) and RFC 4380 (Teredo) lay them out.
var embedForms = []struct {
	name  string
	embed func(v4 [4]byte) [16]byte
}{
	{"IPv4-compatible ::a.b.c.d", func(v [4]byte) (b [16]byte) { copy(b[12:], v[:]); return }},
	{"IPv4-mapped ::ffff:a.b.c.d", func(v [4]byte) (b [16]byte) { b[10], b[11] = 0xff, 0xff; copy(b[12:], v[:]); return }},
	{"IPv4-translated ::ffff:0:a.b.c.d", func(v [4]byte) (b [16]byte) { b[8], b[9] = 0xff, 0xff; copy(b[12:], v[:]); return }},
	{"NAT64 64:ff9b::/96", func(v [4]byte) (b [16]byte) { copy(b[:], nat64(0)); copy(b[12:], v[:]); return }},
	// The local-use prefix's layout is the network's choice, so web_fetch
	// judges every reading of it; the bytes around the IPv4 address carry
	// 8s, so that the other readings of a public address are public too.
	{"NAT64 local-use 64:ff9b:1::/48, /48 layout", func(v [4]byte) [16]byte { return localUse(v, 6, 7, 9, 10) }},
	{"NAT64 local-use 64:ff9b:1::/48, /56 layout", func(v [4]byte) [16]byte { return localUse(v, 7, 9, 10, 11) }},
	{"NAT64 local-use 64:ff9b:1::/48, /64 layout", func(v [4]byte) [16]byte { return localUse(v, 9, 10, 11, 12) }},
	{"NAT64 local-use 64:ff9b:1::/48, /96 layout", func(v [4]byte) [16]byte { return localUse(v, 12, 13, 14, 15) }},
	{"6to4 2002::/16", func(v [4]byte) (b [16]byte) { b[0], b[1] = 0x20, 0x02; copy(b[2:], v[:]); b[15] = 1; return }},
	{"Teredo 2001::/32 client", func(v [4]byte) (b [16]byte) {
		b[0], b[1] = 0x20, 0x01
		copy(b[4:], []byte{65, 54, 227, 120}) // a public Teredo server
		for i := range 4 {
			b[12+i] = v[i] ^ 0xff // the client address is stored inverted
		}
		return
	}},
}

func nat64(localUse byte) []byte { return []byte{0, 0x64, 0xff, 0x9b, 0, localUse} }

// localUse places v at the given bytes of 64:ff9b:1::/48 (RFC 6052: bits
// 64-71, byte 8, are always zero) and 8 in every other byte.
func localUse(v [4]byte, at ...int) (b [16]byte) {
	copy(b[:], nat64(1))
	for i := 6; i < 16; i++ {
		if i != 8 {
			b[i] = 8
		}
	}
	for k, i := range at {
		b[i] = v[k]
	}
	return b
}

// Each IPv6 form that carries an IPv4 address is judged by that address:
// blocked when it carries a loopback, private, link-local or metadata
// address, and let through (by the literal check, the DNS answer check and
// the socket check alike) when it carries a public one.
func TestWebFetchEmbeddedIPv4(t *testing.T) {
	f := newWebFetcher()
	check := func(t *testing.T, ip netip.Addr, want bool) {
		t.Helper()
		if got := blockedAddr(ip); got != want {
			t.Errorf("blockedAddr(%s) = %v, want %v", ip, got, want)
		}
		u, err := parseFetchURL("http://[" + ip.String() + "]:8080/")
		if err != nil {
			t.Fatalf("parse URL of %s: %v", ip, err)
		}
		if err := f.checkHost(u); (err != nil) != want {
			t.Errorf("checkHost(%s) = %v, want blocked %v", u, err, want)
		}
		if err := f.control("tcp6", netip.AddrPortFrom(ip, 8080).String(), nil); (err != nil) != want {
			t.Errorf("socket check of %s = %v, want blocked %v", ip, err, want)
		}
	}
	for _, form := range embedForms {
		for what, v4 := range embeddedBlockedV4 {
			ip := netip.AddrFrom16(form.embed(netip.MustParseAddr(v4).As4()))
			t.Run(form.name+"/"+what, func(t *testing.T) { check(t, ip, true) })
		}
		for what, v4 := range embeddedPublicV4 {
			ip := netip.AddrFrom16(form.embed(netip.MustParseAddr(v4).As4()))
			t.Run(form.name+"/"+what, func(t *testing.T) { check(t, ip, false) })
		}
	}
	// As written by hand, including the issue's own examples.
	for _, c := range []struct {
		addr    string
		blocked bool
	}{
		{"::127.0.0.1", true},
		{"::7f00:1", true},
		{"::169.254.169.254", true},
		{"::8.8.8.8", false},
		{"::2", true}, // 0.0.0.2: "this network"
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::127.0.0.1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b::c0a8:101", true},
		{"64:ff9b::808:808", false},
		{"64:ff9b:1:7f00:0:1::", true}, // /48 layout of 127.0.0.1
		{"64:ff9b:1:808:8:808:808:808", false},
		{"64:ff9b:1::808:808", true}, // read as /48, /56 or /64 it is in 0.0.0.0/8
		{"2002:7f00:1::", true},
		{"2002:a9fe:a9fe::1", true},
		{"2002:a00:1:1::1", true},
		{"2002:808:808::1", false},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true},  // client 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:5601:5601", true},  // client 169.254.169.254 (xor)
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false}, // client 8.8.8.8
		{"2001:0:7f00:1:8000:63bf:f7f7:f7f7", true},     // server 127.0.0.1
		// 100::/64 is discard-only: its edges are blocked, the next is not.
		{"100::", true},
		{"100::1", true},
		{"100::ffff:ffff:ffff:ffff", true},
		{"100:0:0:1::", false},
	} {
		t.Run(c.addr, func(t *testing.T) { check(t, netip.MustParseAddr(c.addr), c.blocked) })
	}
}

// Through the whole tool: the URLs and names answering embedded
// forms are refused before anything is dialled.
func TestWebFetchEmbeddedIPv4Tool(t *testing.T) {
	s := newFetchServer(t)
	s.dns.answers["nat64.test"] = [][]netip.Addr{mustAddrs("64:ff9b::a9fe:a9fe")}
	s.dns.answers["sixtofour.test"] = [][]netip.Addr{mustAddrs("2002:7f00:1::")}
	s.dns.answers["compat.test"] = [][]netip.Addr{mustAddrs("::10.0.0.1")}
	s.dns.answers["teredo.test"] = [][]netip.Addr{mustAddrs("2001:0:4136:e378:8000:63bf:80ff:fffe")}
	s.dns.answers["discard.test"] = [][]netip.Addr{mustAddrs("100::1")}
	tool := s.tool()
	for _, u := range []string{
		"http://[::127.0.0.1]/",
		"http://[::127.0.0.1]:" + s.port + "/headers",
		"http://[64:ff9b::7f00:1]/",
		"http://[64:ff9b::7f00:1]:" + s.port + "/headers",
		"http://[2002:7f00:1::]/",
		"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
		"http://[100::1]/",
		"http://nat64.test/latest/meta-data",
		"http://sixtofour.test/",
		"http://compat.test/",
		"http://teredo.test/",
		"http://discard.test/",
	} {
		t.Run(u, func(t *testing.T) {
			out, err := runFetch(t, t.Context(), tool, u)
			if err != nil {
				t.Fatalf("error %v, want a result", err)
			}
			if r, _ := out.(WebFetchResult); r.Content != wantPrivate || !r.IsError {
				b, _ := json.Marshal(out)
				t.Errorf("got %s, want the private-address refusal", b)
			}
		})
	}
}

// A real server on loopback that web_fetch is not allowed to reach gets no
// request, whichever form the redirect names it in: every hop is checked.
func TestWebFetchRedirectToLoopback(t *testing.T) {
	var hits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "secret")
	}))
	t.Cleanup(canary.Close)
	cp := netip.MustParseAddrPort(canary.Listener.Addr().String()).Port()
	port := strconv.Itoa(int(cp))

	s := newFetchServer(t)
	s.dns.answers["canary.test"] = [][]netip.Addr{mustAddrs("127.0.0.1")}
	tool := s.tool()
	for _, loc := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://0x7f000001:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[::127.0.0.1]:" + port + "/",
		"http://[64:ff9b::7f00:1]:" + port + "/",
		"http://[2002:7f00:1::]:" + port + "/",
		"http://canary.test:" + port + "/",
		// Two hops: the first stays on the allowed server.
		s.URL + "/to?loc=" + url.QueryEscape("http://127.0.0.1:"+port+"/"),
	} {
		t.Run(loc, func(t *testing.T) {
			out, err := runFetch(t, t.Context(), tool, s.URL+"/to?loc="+url.QueryEscape(loc))
			if err != nil {
				t.Fatalf("error %v, want a result", err)
			}
			if r, _ := out.(WebFetchResult); r.Content != wantPrivate || !r.IsError {
				b, _ := json.Marshal(out)
				t.Errorf("got %s, want the private-address refusal", b)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests, want none", n)
	}
	// The canary is reachable at all: a refusal above is the check, not a
	// dead port.
	resp, err := http.Get(canary.URL)
	if err != nil {
		t.Fatalf("the canary server itself: %v", err)
	}
	resp.Body.Close()
}

// A name is looked up once per hop and the address checked is the address
// dialled: a resolver that would answer a private address on a second
// lookup never gets asked twice.
func TestWebFetchResolvesOnce(t *testing.T) {
	s := newFetchServer(t)
	s.dns.answers["once.test"] = [][]netip.Addr{mustAddrs("127.0.0.1"), mustAddrs("10.0.0.9")}
	out, err := runFetch(t, t.Context(), s.tool(), "http://once.test:"+s.port+"/headers")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := out.(WebFetchResult); r.IsError || r.Status != 200 {
		b, _ := json.Marshal(out)
		t.Errorf("got %s, want the test server's answer", b)
	}
	if n := s.dns.calls["once.test"]; n != 1 {
		t.Errorf("once.test looked up %d times, want 1", n)
	}
}
