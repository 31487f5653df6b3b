package secondfactor_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
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
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	shared := func() *redisstore.Client {
		c, err := redisstore.Open(redisstore.Options(srv.Config()), h.Env.Logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	h.Stop()
	h.Env.Shared = shared()
	// Redis expires sessions by its own clock: the test's starts now.
	h.Clock = clocktest.New(time.Now())
	h.Env.Now = h.Clock.Now
	h.Start()
	h.Enrol("alice")

	// The second instance: same files, same secret key, its own state
	// folder and its own connection to the store.
	env := h.Env
	env.Shared = shared()
	env.StateDir = filepath.Join(t.TempDir(), "state-b")
	pb, err := login.New(h.Cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pb.Close() })
	other := httptest.NewServer(web.NewHandler(web.Options{Provider: pb, Catalog: catalog.New(h.Backups), Logger: env.Logger}))
	t.Cleanup(other.Close)
	// post sends a form to instance B; the jar holds the cookies of both
	// (cookies do not depend on the port).
	post := func(b *browser, path string, form url.Values) reply {
		req, _ := http.NewRequest(http.MethodPost, other.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", other.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return b.Do(req)
	}

	b := h.browser()
	if r := b.Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("password at A: %d %s", r.Status, r.Header.Get("Location"))
	}
	pendingValue, formValue := b.Cookie(secondfactor.PendingCookie), b.Cookie(h.P.Manager().FormCookieName())
	code := h.Code()
	if r := post(b, secondfactor.SecondFactorPath, url.Values{"code": {code}, "csrf_token": {b.Token}}); r.Status != http.StatusSeeOther {
		t.Fatalf("code at B: %d", r.Status)
	}
	if s := b.APIStatus(); s != http.StatusOK {
		req, _ := http.NewRequest(http.MethodGet, other.URL+"/api/backups", nil)
		t.Fatalf("the session made at B is not good at A: %d; at B %d", s, b.Do(req).Status)
	}

	// At A, a copy of the browser taken before the step: the page says
	// the step is over rather than offer the code form.
	copied := h.browser()
	copied.SetCookie(h.P.Manager().FormCookieName(), formValue)
	copied.SetCookie(secondfactor.PendingCookie, pendingValue)
	if r := copied.Get(secondfactor.SecondFactorPath, true); r.Status != http.StatusUnauthorized || strings.Contains(r.Body, `name="code"`) {
		t.Fatalf("GET at A of the pending state spent at B: %d\n%s", r.Status, r.Body)
	}

	// At A: the same code from another browser's pending state, and the
	// spent pending state with the next code.
	h.refusesReplays(t, h.browser(), b, code, pendingValue)
}
