package login

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/web"
)

// testSecret is a BACKUP_SECRET_KEY for tests only.
var testSecret = []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")

// Test users and their passwords; hashes are made at bcrypt's minimum cost.
var testPasswords = map[string]string{"alice": "alice-pw", "bob": "bob-pw"}

// fakeClock is an injectable clock that only moves when told to.
type fakeClock = clocktest.Clock

func newClock() *fakeClock {
	return clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
}

// usersText returns a user file for the named test users.
func usersText(t testing.TB, names ...string) string {
	return testkit.Users(t, testPasswords, names...)
}

// writeFile replaces path's content by rename, as editors and the user
// command do, so the poller sees a new inode.
func writeFile(t testing.TB, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

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
	h := &harness{t: t, clock: newClock(), logs: &logtest.Buffer{}, usersPath: filepath.Join(dir, "users")}
	writeFile(t, h.usersPath, usersText(t, "alice", "bob"))
	h.cfg = Config{UsersFile: h.usersPath, UseBcrypt: true, PollInterval: -1}
	if edit != nil {
		edit(&h.cfg)
	}
	h.env = auth.Deps{
		Logger:    slog.New(slog.NewTextHandler(h.logs, nil)),
		SecretKey: testSecret,
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

func (b *browser) do(req *http.Request) reply {
	b.t.Helper()
	if b.from != "" {
		req.Header.Set("X-Forwarded-For", b.from)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// get fetches path; html makes it a browser navigation (Accept: text/html).
func (b *browser) get(path string, html bool) reply {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.h.srv.URL+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	if html {
		req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	}
	return b.do(req)
}

// post sends a form to path with the Origin of the server, as a browser
// submitting one of the site's own forms does.
func (b *browser) post(path string, form url.Values) reply {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.h.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

var (
	inputRE = regexp.MustCompile(`<input[^>]*>`)
	nameRE  = regexp.MustCompile(`name="([^"]*)"`)
	valueRE = regexp.MustCompile(`value="([^"]*)"`)
)

// field returns the value of the input named name in an HTML page.
func field(page, name string) (string, bool) {
	for _, in := range inputRE.FindAllString(page, -1) {
		if m := nameRE.FindStringSubmatch(in); m != nil && m[1] == name {
			if v := valueRE.FindStringSubmatch(in); v != nil {
				return v[1], true
			}
			return "", true
		}
	}
	return "", false
}

// formToken fetches the login page and returns its CSRF token. A browser
// that is signed in is sent away from the page; it reuses the token of the
// form it saw before, as a second tab would.
func (b *browser) formToken() string {
	b.t.Helper()
	r := b.get(b.h.p.LoginPath(), true)
	if r.status == http.StatusSeeOther && b.token != "" {
		return b.token
	}
	if r.status != http.StatusOK {
		b.t.Fatalf("GET login page: status %d", r.status)
	}
	tok, ok := field(r.body, "csrf_token")
	if !ok || tok == "" {
		b.t.Fatalf("login page has no csrf_token field")
	}
	b.token = tok
	return tok
}

// login fetches the form and posts it with user, pw and next.
func (b *browser) login(user, pw, next string) reply {
	b.t.Helper()
	tok := b.formToken()
	return b.post(b.h.p.LoginPath(), url.Values{"username": {user}, "password": {pw}, "csrf_token": {tok}, "next": {next}})
}

// passwordGiven is a new browser that posted user's right password with
// next "/", whatever the answer (with a second factor, the next step is
// the code).
func (h *harness) passwordGiven(user string) *browser {
	b := h.browser()
	b.login(user, testPasswords[user], "/")
	return b
}

// mustLogin logs in and fails the test unless it succeeds.
func (b *browser) mustLogin(user string) {
	b.t.Helper()
	if r := b.login(user, testPasswords[user], ""); r.status != http.StatusSeeOther {
		b.t.Fatalf("login as %s: status %d, want 303", user, r.status)
	}
}

// csrf returns the session's CSRF token from the catalog page.
func (b *browser) csrf() string {
	b.t.Helper()
	r := b.get("/", true)
	if r.status != http.StatusOK {
		b.t.Fatalf("GET /: status %d", r.status)
	}
	tok, ok := field(r.body, "csrf_token")
	if !ok || tok == "" {
		b.t.Fatalf("catalog page has no csrf_token field")
	}
	return tok
}

// apiStatus returns the status of GET /api/backups.
func (b *browser) apiStatus() int {
	b.t.Helper()
	return b.get("/api/backups", false).status
}
