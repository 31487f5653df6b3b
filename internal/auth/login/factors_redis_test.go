package login

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/web"
)

// TestSecondFactorSharedByRedis: with store = redis, two instances share
// the pending state and the used codes: a password checked by one is
// completed at the other, the pending state is spent for both, and a
// TOTP code used at one is refused at the other; the code form is not
// offered at one for a pending state spent at the other.
func TestSecondFactorSharedByRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	h := newFactorHarness(t, SecondFactorOptional, nil)
	shared := func() *redisstore.Client {
		c, err := redisstore.Open(redisstore.Options(srv.Config()), h.env.Logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	h.stop()
	h.env.Shared = shared()
	// Redis expires sessions by its own clock: the test's starts now.
	h.clock = clocktest.New(time.Now())
	h.env.Now = h.clock.Now
	h.start()
	h.enrol("alice")

	// The second instance: same files, same secret key, its own state
	// folder and its own connection to the store.
	env := h.env
	env.Shared = shared()
	env.StateDir = filepath.Join(t.TempDir(), "state-b")
	pb, err := New(h.cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pb.Close() })
	other := httptest.NewServer(web.NewHandler(web.Options{Provider: pb, Catalog: catalog.New(h.backups), Logger: env.Logger}))
	t.Cleanup(other.Close)
	// post sends a form to instance B; the jar holds the cookies of both
	// (cookies do not depend on the port).
	post := func(b *browser, path string, form url.Values) reply {
		req, _ := http.NewRequest(http.MethodPost, other.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", other.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return b.do(req)
	}

	b := h.browser()
	if r := b.login("alice", testPasswords["alice"], "/"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("password at A: %d %s", r.status, r.header.Get("Location"))
	}
	pendingValue, formValue := b.cookie(secondfactor.PendingCookie), b.cookie(h.p.Manager().FormCookieName())
	code := h.code()
	if r := post(b, secondfactor.SecondFactorPath, url.Values{"code": {code}, "csrf_token": {b.token}}); r.status != http.StatusSeeOther {
		t.Fatalf("code at B: %d", r.status)
	}
	if s := b.apiStatus(); s != http.StatusOK {
		req, _ := http.NewRequest(http.MethodGet, other.URL+"/api/backups", nil)
		t.Fatalf("the session made at B is not good at A: %d; at B %d", s, b.do(req).status)
	}

	// At A, a copy of the browser taken before the step: the page says
	// the step is over rather than offer the code form.
	copied := h.browser()
	copied.setCookie(h.p.Manager().FormCookieName(), formValue)
	copied.setCookie(secondfactor.PendingCookie, pendingValue)
	if r := copied.get(secondfactor.SecondFactorPath, true); r.status != http.StatusUnauthorized || strings.Contains(r.body, `name="code"`) {
		t.Fatalf("GET at A of the pending state spent at B: %d\n%s", r.status, r.body)
	}

	// At A: the same code from another browser's pending state, and the
	// spent pending state with the next code.
	h.refusesReplays(t, h.browser(), b, code, pendingValue)
}
