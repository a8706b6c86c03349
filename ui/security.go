package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

const (
	// sessionCookie is the session cookie's name; the port is added to it,
	// because cookies do not tell ports apart and two Parleys on one
	// machine (other data folders) must not log each other out.
	sessionCookie = "parley_session"
	// csp forbids inline script everywhere: even if a sanitiser missed
	// something, model text cannot run script. Datastar evaluates its
	// data-* expressions with Function(), hence 'unsafe-eval'.
	csp = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' https: data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)

// Auth decides who may talk to the server. With a token, every request needs
// it: as a Bearer header, or as the session cookie a browser gets by opening
// any page with ?token=… (or /auth?token=…). The session cookie is derived
// from the token, so it outlives a restart and dies when the token changes.
// A launch secret (the desktop window) is good for exactly one exchange.
// Parley itself always runs with a token (app loads it from the data
// folder); an Auth with neither token nor launch secret lets everyone in and
// exists for tests of the HTTP layer alone.
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
	var session string
	if ok {
		session = randomHex()
		if a.sessions == nil {
			a.sessions = map[string]bool{}
		}
		a.sessions[session] = true
	}
	a.mu.Unlock()
	if t := q.Get("token"); !ok && t != "" && a.Token != "" && equal(t, a.Token) {
		ok, session = true, a.tokenSession()
	}
	if !ok {
		loginPage(w, r, "This login link is not valid (it may have been used already, or the token has changed).")
		return
	}
	setSession(w, r, session)
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

// login trades ?token= on any page for the session cookie and sends the
// browser on to the same address without the token, so it stays out of the
// history and of what the page can read. A wrong token gets the login page.
func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	t := q.Get("token")
	if a.Token == "" || !equal(t, a.Token) {
		loginPage(w, r, "That token is not this Parley's. `parley token` prints the right one.")
		return
	}
	setSession(w, r, a.tokenSession())
	q.Del("token")
	clean := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	w.Header().Set("Cache-Control", "no-store")
	if site := r.Header.Get("Sec-Fetch-Site"); site == "" || site == "none" || site == "same-origin" {
		http.Redirect(w, r, clean.String(), http.StatusSeeOther)
		return
	}
	// Opened from another site (a link in a mail, the desktop's start
	// page): a redirect would still count as cross-site and arrive without
	// the Strict cookie; a refresh from this page is same-site.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = continueTmpl.Execute(w, clean.String())
}

// tokenSession is the session cookie's value for the token: a MAC of it,
// never the token itself.
func (a *Auth) tokenSession() string {
	m := hmac.New(sha256.New, []byte(a.Token))
	io.WriteString(m, "parley session v1")
	return hex.EncodeToString(m.Sum(nil))
}

// allowed reports whether r carries the token or a live session.
func (a *Auth) allowed(r *http.Request) bool {
	if !a.Required() {
		return true
	}
	if h := r.Header.Get("Authorization"); a.Token != "" && strings.HasPrefix(h, "Bearer ") && equal(strings.TrimPrefix(h, "Bearer "), a.Token) {
		return true
	}
	c, err := r.Cookie(cookieName(r))
	if err != nil {
		return false
	}
	if a.Token != "" && equal(c.Value, a.tokenSession()) {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[c.Value]
}

// cookieName is the session cookie's name for the port r came to.
func cookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return sessionCookie + "_" + port
	}
	return sessionCookie
}

// setSession gives the browser its session: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page sends it).
func setSession(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// wantsHTML reports a browser asking for a page (not the API, not a stream).
func wantsHTML(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		!strings.HasPrefix(r.URL.Path, "/api/") && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// loginPage answers 401 to a request without a credential: a page that asks
// for the token when a browser asked for a page, one line otherwise.
func loginPage(w http.ResponseWriter, r *http.Request, reason string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="parley"`)
	w.Header().Set("Cache-Control", "no-store")
	if !wantsHTML(r) {
		http.Error(w, "Parley: authentication required: "+reason+" Send Authorization: Bearer <token> (`parley token` prints it).", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_ = loginTmpl.Execute(w, map[string]string{"Reason": reason, "Path": samePath(r.URL.Path)})
}

// samePath is p if it is a path on this server, else "/": a request for
// "//other.example/x" must not make the login form send the token there.
func samePath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}

var loginTmpl = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley — sign in</title><link rel="stylesheet" href="/static/app.css"></head>
<body class="login-page"><main class="login">
<h1>Parley</h1>
<p id="login-reason">{{.Reason}}</p>
<p>Parley runs commands on this computer, so every visit needs its token. Open the address Parley printed when it
started, or paste the token here (<code>parley token</code> prints it).</p>
<form method="get" action="{{.Path}}" class="login-form">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" autofocus required>
<button class="btn btn-send" type="submit">Continue</button>
</form></main></body></html>
`))

var continueTmpl = template.Must(template.New("continue").Parse(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
	`<title>Parley</title><meta http-equiv="refresh" content="0;url={{.}}"></head><body><a href="{{.}}">Continue to Parley</a></body></html>
`))

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
		if r.URL.Path == "/auth" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r) // the login exchange, and the login page's style
			return
		}
		if r.Method == http.MethodGet && r.URL.Query().Has("token") && s.cfg.Auth.Token != "" {
			s.cfg.Auth.login(w, r)
			return
		}
		if !s.cfg.Auth.allowed(r) {
			loginPage(w, r, "No token or session came with this request.")
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
