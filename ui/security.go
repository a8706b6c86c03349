package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

const (
	sessionCookie = "parley_session"
	// csp forbids inline script everywhere: even if a sanitiser missed
	// something, model text cannot run script. Datastar evaluates its
	// data-* expressions with Function(), hence 'unsafe-eval'.
	csp = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' https: data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)

// Auth decides who may talk to the server. With no token and no launch
// secret, every client that passed the Host check is let in (loopback web
// mode). With a token, every request needs it: as a Bearer header, or as the
// session cookie a browser gets by opening /auth?token=…. A launch secret
// (the desktop window) is good for exactly one exchange.
type Auth struct {
	Token string

	mu       sync.Mutex
	launch   string
	sessions map[string]bool
}

// NewAuth returns an Auth requiring token ("" requires nothing).
func NewAuth(token string) *Auth { return &Auth{Token: token} }

// Required reports whether requests must authenticate.
func (a *Auth) Required() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Token != "" || a.launch != "" || len(a.sessions) > 0
}

// LaunchPath returns a one-time path that logs a browser in, for the desktop
// window. From then on every request needs the session cookie.
func (a *Auth) LaunchPath() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.launch = randomHex()
	return "/auth?secret=" + a.launch
}

// exchange trades a token or the launch secret for an HttpOnly session cookie.
func (a *Auth) exchange(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	ok := false
	if s := q.Get("secret"); s != "" && a.launch != "" && equal(s, a.launch) {
		a.launch = "-used-" // spent, but auth stays required
		ok = true
	}
	if t := q.Get("token"); t != "" && a.Token != "" && equal(t, a.Token) {
		ok = true
	}
	var session string
	if ok {
		session = randomHex()
		if a.sessions == nil {
			a.sessions = map[string]bool{}
		}
		a.sessions[session] = true
	}
	a.mu.Unlock()
	if !ok {
		http.Error(w, "Parley: this login link is not valid (it may have been used already). Open the address Parley printed at start-up.", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	// Not a redirect: when the login link was opened from another site (the
	// desktop window's start page, a link in a chat), every hop of that
	// navigation counts as cross-site and a redirect to / would arrive
	// without the Strict cookie. A refresh from this page is same-site, and
	// replaces the login link in the history.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, loggedIn)
}

const loggedIn = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Parley</title>` +
	`<meta http-equiv="refresh" content="0;url=/"></head><body><a href="/">Continue to Parley</a></body></html>`

// allowed reports whether r carries the token or a live session.
func (a *Auth) allowed(r *http.Request) bool {
	if !a.Required() {
		return true
	}
	if h := r.Header.Get("Authorization"); a.Token != "" && strings.HasPrefix(h, "Bearer ") && equal(strings.TrimPrefix(h, "Bearer "), a.Token) {
		return true
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[c.Value]
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func randomHex() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// hostList is the set of Host values the server answers to.
type hostList struct {
	mu    sync.RWMutex
	hosts map[string]bool
}

func (h *hostList) set(hosts []string) {
	m := map[string]bool{}
	for _, x := range hosts {
		m[strings.ToLower(x)] = true
	}
	h.mu.Lock()
	h.hosts = m
	h.mu.Unlock()
}

func (h *hostList) has(host string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.hosts == nil || h.hosts[strings.ToLower(host)]
}

// guard applies, in order: the Host check (no DNS rebinding), the Origin
// check on state-changing requests (no cross-site requests), and Auth.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer browsers send
		// "Origin: null" on form posts, which the Origin check must refuse.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		if !s.hosts.has(r.Host) {
			http.Error(w, "Parley: unknown Host "+r.Host+" (only the address Parley listens on is served)", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !s.sameOrigin(r) {
				http.Error(w, "Parley: cross-origin request refused", http.StatusForbidden)
				return
			}
		}
		if r.URL.Path != "/auth" && !s.cfg.Auth.allowed(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
			http.Error(w, "Parley: authentication required: open the address Parley printed at start-up, or send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin accepts requests whose Origin is this server, and requests with
// no Origin and no cross-site fetch metadata (command-line clients: browsers
// always send Origin on POST).
func (s *Server) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && s.hosts.has(u.Host)
}
