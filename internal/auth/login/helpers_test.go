package login

import (
	"github.com/backupweb/backupweb/internal/testkit/formtest"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/loginfix"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// fakeClock is an injectable clock that only moves when told to.
type fakeClock = clocktest.Clock

// harness is one provider served through the program's real handler.
type harness struct {
	t         testing.TB
	cfg       Config
	env       auth.Deps
	usersPath string
	backups   string
	clock     *fakeClock
	logs      *logtest.Buffer
	p         *Provider
	srv       *httptest.Server
	handler   http.Handler
	// resolver, when set before start, is the handler's client-address
	// resolver (to believe X-Forwarded-For from the test's loopback).
	resolver *peer.Resolver
}

// newHarness starts a provider for alice and bob (bcrypt, cost 4) with
// polling off, a backups folder holding one file, and an HTTP server.
// edit, when given, adjusts the configuration first.
func newHarness(t testing.TB, edit func(*Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, clock: loginfix.NewClock(), logs: &logtest.Buffer{}, usersPath: filepath.Join(dir, "users")}
	loginfix.WriteFile(t, h.usersPath, loginfix.UsersText(t, "alice", "bob"))
	h.cfg = Config{UsersFile: h.usersPath, UseBcrypt: true, PollInterval: -1}
	if edit != nil {
		edit(&h.cfg)
	}
	h.env = auth.Deps{
		Logger:    slog.New(slog.NewTextHandler(h.logs, nil)),
		SecretKey: loginfix.Secret,
		StateDir:  filepath.Join(dir, "state"),
		Now:       h.clock.Now,
	}
	// With a second factor, passkeys are offered and need the public URL;
	// the browser tests of passkeys serve at the one they set.
	h.env.PublicURL = &url.URL{Scheme: "http", Host: "localhost"}
	// The program hands the providers the web layer's error writer.
	h.env.Errors = web.NewErrors(h.env.Logger)
	h.backups = filepath.Join(dir, "backups")
	if err := os.MkdirAll(h.backups, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.backups, "nightly.tar.gz"), []byte("backup bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.start()
	return h
}

// start builds the provider and serves it; a second call (after stop)
// simulates a restart over the same state directory.
func (h *harness) start() {
	h.t.Helper()
	p, err := New(h.cfg, h.env)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	h.p = p
	h.handler = web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(h.backups), Logger: h.env.Logger, Errors: h.env.Errors, Resolver: h.resolver})
	h.srv = httptest.NewServer(h.handler)
	h.t.Cleanup(h.stop)
}

// stop shuts the server and closes the provider; calling it twice is
// harmless.
func (h *harness) stop() {
	h.srv.Close()
	if err := h.p.Close(); err != nil {
		h.t.Errorf("Close: %v", err)
	}
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so tests see every 303.
type browser struct {
	t     testing.TB
	h     *harness
	jar   http.CookieJar
	c     *http.Client
	token string // the last login form's CSRF token
	from  string // when set, the client address sent in X-Forwarded-For
}

func (h *harness) browser() *browser {
	c := testkit.Client()
	return &browser{t: h.t, h: h, jar: c.Jar, c: c}
}

// browserFrom is a browser whose requests come from the client address
// addr (sent in X-Forwarded-For).
func (h *harness) browserFrom(addr string) *browser {
	b := h.browser()
	b.from = addr
	return b
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   string
}

// do, get and post are the formtest client's, with this package's reply.
func (b *browser) do(req *http.Request) reply { return replyOf(b.client().Do(req)) }

func (b *browser) get(path string, html bool) reply { return replyOf(b.client().Get(path, html)) }

func (b *browser) post(path string, form url.Values) reply {
	return replyOf(b.client().Post(path, form))
}

// client is the browser as a formtest client of the harness's server.
func (b *browser) client() *formtest.Client {
	return &formtest.Client{T: b.t, Base: func() string { return b.h.srv.URL }, C: b.c, From: b.from}
}

func replyOf(r formtest.Reply) reply { return reply{status: r.Status, header: r.Header, body: r.Body} }

// field returns the value of the input named name in an HTML page.
func field(page, name string) (string, bool) { return formtest.Field(page, name) }

// formToken fetches the login page and returns its CSRF token
// (formtest's FormToken).
func (b *browser) formToken() string {
	b.t.Helper()
	b.token = b.client().FormToken(b.h.p.LoginPath(), b.token)
	return b.token
}

// login fetches the form and posts it with user, pw and next.
func (b *browser) login(user, pw, next string) reply {
	b.t.Helper()
	r, tok := b.client().SignIn(b.h.p.LoginPath(), b.token, user, pw, next)
	b.token = tok
	return replyOf(r)
}

// passwordGiven is a new browser that posted user's right password with
// next "/", whatever the answer (with a second factor, the next step is
// the code).
func (h *harness) passwordGiven(user string) *browser {
	b := h.browser()
	b.login(user, loginfix.Passwords[user], "/")
	return b
}

// mustLogin logs in and fails the test unless it succeeds.
func (b *browser) mustLogin(user string) {
	b.t.Helper()
	if r := b.login(user, loginfix.Passwords[user], ""); r.status != http.StatusSeeOther {
		b.t.Fatalf("login as %s: status %d, want 303", user, r.status)
	}
}

// csrf returns the session's CSRF token from the catalog page.
func (b *browser) csrf() string {
	b.t.Helper()
	return b.client().PageToken("/")
}

// apiStatus returns the status of GET /api/backups.
func (b *browser) apiStatus() int {
	b.t.Helper()
	return b.get("/api/backups", false).status
}
