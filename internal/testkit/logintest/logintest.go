// Package logintest serves a flask-login provider (package login) for
// tests of the packages beside it: a Harness builds the provider over a
// user file of two users (alice and bob, bcrypt at cost 4) in a temporary
// folder, with a clock that moves only when told, and serves it through
// the program's real handler; a Browser is a client with a cookie jar
// that does not follow redirects, which signs in through the login page.
package logintest

import (
	"context"
	"github.com/backupweb/backupweb/internal/testkit/formtest"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/loginfix"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// The fixed data of the sign-in tests, as loginfix has them.
var (
	// Secret is a BACKUP_SECRET_KEY for tests only.
	Secret = loginfix.Secret
	// Passwords are the test users' passwords.
	Passwords = loginfix.Passwords
	// NewClock returns a Clock at 2025-03-01 12:00 UTC.
	NewClock = loginfix.NewClock
	// UsersText returns a user file for the named test users.
	UsersText = loginfix.UsersText
	// WriteFile replaces path's content by rename, as editors do.
	WriteFile = loginfix.WriteFile
)

// Clock is an injectable clock that only moves when told to.
type Clock = clocktest.Clock

// Harness is one provider served through the program's real handler.
type Harness struct {
	T testing.TB
	// Cfg is the provider's configuration and Env its dependencies (the
	// logger writes to Logs, the clock is Clock); UsersPath is the user
	// file and Backups the folder served.
	Cfg       login.Config
	Env       auth.Deps
	UsersPath string
	Backups   string
	Clock     *Clock
	Logs      *logtest.Buffer
	// P is the provider Start built, Srv the server of Handler.
	P       *login.Provider
	Srv     *httptest.Server
	Handler http.Handler
	// Resolver, when set before Start, is the handler's client-address
	// resolver (to believe X-Forwarded-For from the test's loopback).
	Resolver *peer.Resolver
	// Listener, when set before Start, is where the server listens (its
	// address known before the provider is built); Wrap, when set, wraps
	// the handler (to watch requests).
	Listener net.Listener
	Wrap     func(http.Handler) http.Handler
}

// New starts a provider for alice and bob (bcrypt, cost 4) with
// polling off, a backups folder holding one file, and an HTTP server.
// edit, when given, adjusts the configuration first.
func New(t testing.TB, edit func(*login.Config)) *Harness {
	t.Helper()
	return NewWith(t, edit, nil)
}

// NewWith is New with prepare, when given, run on the
// harness just before it starts (to set its listener, wrap or env).
func NewWith(t testing.TB, edit func(*login.Config), prepare func(*Harness)) *Harness {
	t.Helper()
	dir := t.TempDir()
	h := &Harness{T: t, Clock: NewClock(), Logs: &logtest.Buffer{}, UsersPath: filepath.Join(dir, "users")}
	WriteFile(t, h.UsersPath, UsersText(t, "alice", "bob"))
	h.Cfg = login.Config{UsersFile: h.UsersPath, UseBcrypt: true, PollInterval: -1}
	if edit != nil {
		edit(&h.Cfg)
	}
	h.Env = auth.Deps{
		Logger:    slog.New(slog.NewTextHandler(h.Logs, nil)),
		SecretKey: Secret,
		StateDir:  filepath.Join(dir, "state"),
		Now:       h.Clock.Now,
	}
	// With a second factor, passkeys are offered and need the public URL;
	// the Browser tests of passkeys serve at the one they set.
	h.Env.PublicURL = &url.URL{Scheme: "http", Host: "localhost"}
	// The program hands the providers the web layer's error writer.
	h.Env.Errors = web.NewErrors(h.Env.Logger)
	h.Backups = filepath.Join(dir, "backups")
	if err := os.MkdirAll(h.Backups, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Backups, "nightly.tar.gz"), []byte("backup bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(h)
	}
	h.Start()
	return h
}

// Start builds the provider and serves it; a second call (after Stop)
// simulates a restart over the same state directory.
func (h *Harness) Start() {
	h.T.Helper()
	p, err := login.New(h.Cfg, h.Env)
	if err != nil {
		h.T.Fatalf("New: %v", err)
	}
	h.P = p
	h.Handler = web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(h.Backups), Logger: h.Env.Logger, Errors: h.Env.Errors, Resolver: h.Resolver})
	served := h.Handler
	if h.Wrap != nil {
		served = h.Wrap(served)
	}
	if h.Listener != nil {
		h.Srv = httptest.NewUnstartedServer(served)
		h.Srv.Listener.Close()
		h.Srv.Listener, h.Listener = h.Listener, nil
		h.Srv.Start()
	} else {
		h.Srv = httptest.NewServer(served)
	}
	h.T.Cleanup(h.Stop)
}

// Stop shuts the server and closes the provider; calling it twice is
// harmless.
func (h *Harness) Stop() {
	h.Srv.Close()
	if err := h.P.Close(); err != nil {
		h.T.Errorf("Close: %v", err)
	}
}

// Browser is an HTTP client with a cookie jar that does not follow
// redirects, so tests see every 303: a formtest.Client (T, C, From; Do,
// Get, Post) of the harness's server.
type Browser struct {
	*formtest.Client
	// H is the harness whose server it talks to, through C and its Jar.
	H     *Harness
	Jar   http.CookieJar
	Token string // the last login form's CSRF token
}

// Browser returns a new browser of the harness.
func (h *Harness) Browser() *Browser {
	c := testkit.Client()
	b := &Browser{H: h, Jar: c.Jar}
	b.Client = &formtest.Client{T: h.T, Base: func() string { return b.H.Srv.URL }, C: c}
	return b
}

// Reply is a response with its body read.
type Reply = formtest.Reply

// PostJSON posts body to path as the passkey script does, with the CSRF
// token in X-CSRF-Token.
func (b *Browser) PostJSON(path, token string, body []byte) Reply {
	b.T.Helper()
	return b.Client.PostJSON(path, sessionauth.CSRFHeader, token, body)
}

// Field returns the value of the input named name in an HTML page.
func Field(page, name string) (string, bool) { return formtest.Field(page, name) }

// FormToken fetches the login page and returns its CSRF token
// (formtest's FormToken: a signed-in browser reuses the last one).
func (b *Browser) FormToken() string {
	b.T.Helper()
	b.Token = b.Client.FormToken(b.H.P.LoginPath(), b.Token)
	return b.Token
}

// Login fetches the form and posts it with user, pw and next.
func (b *Browser) Login(user, pw, next string) Reply {
	b.T.Helper()
	r, tok := b.Client.SignIn(b.H.P.LoginPath(), b.Token, user, pw, next)
	b.Token = tok
	return r
}

// PasswordGiven is a new browser that posted user's right password with
// next "/", whatever the answer (with a second factor, the next step is
// the code).
func (h *Harness) PasswordGiven(user string) *Browser {
	b := h.Browser()
	b.Login(user, Passwords[user], "/")
	return b
}

// MustLogin logs in and fails the test unless it succeeds.
func (b *Browser) MustLogin(user string) {
	b.T.Helper()
	if r := b.Login(user, Passwords[user], ""); r.Status != http.StatusSeeOther {
		b.T.Fatalf("login as %s: status %d, want 303", user, r.Status)
	}
}

// SessionCookie returns the session cookie the jar holds, "" if none.
func (b *Browser) SessionCookie() string {
	u, _ := url.Parse(b.H.Srv.URL)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == b.H.P.Manager().CookieName() {
			return c.Value
		}
	}
	return ""
}

// CSRF returns the session's CSRF token from the catalog page.
func (b *Browser) CSRF() string {
	b.T.Helper()
	return b.Client.PageToken("/")
}

// APIStatus returns the status of GET /api/backups.
func (b *Browser) APIStatus() int {
	b.T.Helper()
	return b.Get("/api/backups", false).Status
}

// TOTPSecret is alice's TOTP secret in the second-factor tests.
const TOTPSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

// NewFactors is New with second_factor set to mode.
func NewFactors(t testing.TB, mode login.SecondFactor, edit func(*login.Config)) *Harness {
	t.Helper()
	return New(t, func(c *login.Config) {
		c.SecondFactor = mode
		if edit != nil {
			edit(c)
		}
	})
}

// FactorKeys returns the factors file's keys under the test secret.
func FactorKeys(t testing.TB) *factors.Keys {
	t.Helper()
	k, err := factors.NewKeys(Secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Enrol gives user the TOTP secret TOTPSecret and ten recovery codes in
// the provider's store of second factors, as `backupweb user totp` and
// `recovery-codes` do, and returns the codes.
func (h *Harness) Enrol(user string) []string {
	h.T.Helper()
	keys := FactorKeys(h.T)
	var codes []string
	err := h.P.UserState().EditFactors(context.Background(), user, func(rec *factors.Record) error {
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		rec.TOTP = &factors.TOTP{Sealed: keys.SealTOTP(user, TOTPSecret), Added: time.Now()}
		codes, rec.Recovery = keys.NewRecoveryCodes(user)
		return nil
	})
	if err != nil {
		h.T.Fatal(err)
	}
	return codes
}

// RefusesReplays checks that a second factor cannot be replayed: alice's
// code, from fresh's new password step, is refused as used; spent, given
// back its spent pending state (pendingValue), is refused with the next
// code.
func (h *Harness) RefusesReplays(t *testing.T, fresh, spent *Browser, code, pendingValue string) {
	t.Helper()
	fresh.Login("alice", Passwords["alice"], "/")
	if r := fresh.SecondFactor(code, "/"); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, "used already") {
		t.Fatalf("the code again: %d", r.Status)
	}
	h.Clock.Advance(30 * time.Second)
	spent.SetCookie(secondfactor.PendingCookie, pendingValue)
	if r := spent.SecondFactor(h.Code(), "/"); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, "expired or was completed") {
		t.Fatalf("the spent pending state: %d", r.Status)
	}
}

// Code returns the TOTP code of TOTPSecret at the harness's clock.
func (h *Harness) Code() string {
	h.T.Helper()
	c, err := factors.TOTPCode(TOTPSecret, h.Clock.Now())
	if err != nil {
		h.T.Fatal(err)
	}
	return c
}

// SecondFactor posts code to the second-factor step with the form token
// the browser holds.
func (b *Browser) SecondFactor(code, next string) Reply {
	b.T.Helper()
	return b.Post(secondfactor.SecondFactorPath, url.Values{"code": {code}, "csrf_token": {b.Token}, "next": {next}})
}

// Cookie returns the value of the cookie name the jar holds, "" if none.
func (b *Browser) Cookie(name string) string {
	u, _ := url.Parse(b.H.Srv.URL)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// SetCookie puts a cookie in the jar, as a Browser that kept it would.
func (b *Browser) SetCookie(name, value string) {
	u, _ := url.Parse(b.H.Srv.URL)
	b.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// User returns who the provider says the Browser's session is.
func (b *Browser) User() (auth.User, bool) {
	b.T.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, b.H.Srv.URL+"/", nil)
	u, _ := url.Parse(b.H.Srv.URL)
	for _, c := range b.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	usr, ok, err := b.H.P.Identify(req)
	if err != nil {
		b.T.Fatal(err)
	}
	return usr, ok
}
