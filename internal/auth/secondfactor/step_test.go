package secondfactor_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// TestSecondFactorOffChangesNothing: with second_factor off, a user with
// a factor in the file signs in with the password alone and the step's
// routes answer 404.
func TestSecondFactorOffChangesNothing(t *testing.T) {
	h := newHarness(t, nil)
	keys := logintest.FactorKeys(t)
	factors.Edit(h.UsersPath+factors.Suffix, keys, func(d *factors.Doc) error {
		return d.Put(&factors.Record{User: "alice", TOTP: &factors.TOTP{Sealed: keys.SealTOTP("alice", logintest.TOTPSecret)}})
	})
	b := h.browser()
	if r := b.Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("login: %d %s", r.Status, r.Header.Get("Location"))
	}
	if b.APIStatus() != http.StatusOK {
		t.Error("the password alone does not sign in")
	}
	if r := h.browser().Get(secondfactor.SecondFactorPath, true); r.Status != http.StatusNotFound {
		t.Errorf("GET %s: %d, want 404", secondfactor.SecondFactorPath, r.Status)
	}
}

// TestSecondFactorFlow walks the step: the pending state grants nothing,
// a wrong code is 401, the right one starts a fresh session naming the
// factor, and neither the code nor the pending state works twice.
func TestSecondFactorFlow(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	h.Enrol("alice")

	// bob has no factor: the password alone, as before.
	bob := h.browser()
	if r := bob.Login("bob", logintest.Passwords["bob"], "/"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("bob: %d %s", r.Status, r.Header.Get("Location"))
	}
	if u, ok := bob.User(); !ok || u.SecondFactor != "" {
		t.Fatalf("bob: %+v %v", u, ok)
	}

	b := h.browser()
	r := b.Login("alice", logintest.Passwords["alice"], "/backups/nightly.tar.gz")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.SecondFactorPath+"?next=%2Fbackups%2Fnightly.tar.gz" {
		t.Fatalf("password: %d %q", r.Status, r.Header.Get("Location"))
	}
	if b.SessionCookie() != "" || b.Cookie(secondfactor.PendingCookie) == "" {
		t.Fatal("the password step made a session, or no pending state")
	}
	// The pending state grants nothing: no page, no API, no logout.
	if r := b.Get("/", true); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), h.P.LoginPath()) {
		t.Errorf("GET / while pending: %d %s", r.Status, r.Header.Get("Location"))
	}
	if s := b.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("API while pending: %d", s)
	}
	if r := b.Get("/backups/nightly.tar.gz", false); r.Status != http.StatusUnauthorized {
		t.Errorf("a backup while pending: %d", r.Status)
	}
	if _, ok := b.User(); ok {
		t.Error("the pending state identifies a user")
	}
	if r := b.Post("/logout", url.Values{"csrf_token": {b.Token}}); r.Status == http.StatusOK {
		t.Errorf("logout with the form token while pending: %d", r.Status)
	}

	page := b.Get(secondfactor.SecondFactorPath+"?next=%2Fbackups%2Fnightly.tar.gz", true)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `name="code"`) || !strings.Contains(page.Body, `id="passkey-slot"`) {
		t.Fatalf("the step's page: %d", page.Status)
	}
	if r := b.SecondFactor("000000", "/"); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, refusal.WrongCode.Message()) {
		t.Fatalf("wrong code: %d", r.Status)
	}
	if r := b.SecondFactor("", "/"); r.Status != http.StatusUnauthorized {
		t.Fatalf("empty code: %d", r.Status)
	}
	if r := b.Post(secondfactor.SecondFactorPath, url.Values{"code": {h.Code()}, "csrf_token": {"forged"}}); r.Status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", r.Status)
	}
	pendingValue := b.Cookie(secondfactor.PendingCookie)
	code := h.Code()
	r = b.SecondFactor(code, "/backups/nightly.tar.gz")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/backups/nightly.tar.gz" {
		t.Fatalf("right code: %d %s", r.Status, r.Header.Get("Location"))
	}
	first := b.SessionCookie()
	if first == "" || b.Cookie(secondfactor.PendingCookie) != "" {
		t.Fatal("no session, or the pending state stayed")
	}
	if u, ok := b.User(); !ok || u.Name != "alice" || u.SecondFactor != "totp" {
		t.Fatalf("session: %+v %v", u, ok)
	}
	if b.APIStatus() != http.StatusOK {
		t.Fatal("the session grants nothing")
	}

	// The same code again, from a fresh password step; the spent pending
	// state, kept by the browser, with the next code.
	h.refusesReplays(t, h.browser(), b, code, pendingValue)
	if b.SessionCookie() != first {
		t.Error("the session changed")
	}
}

// TestSecondFactorSessionRotates: a browser that held a session gets a
// new id after the second factor, and the old id is dead.
func TestSecondFactorSessionRotates(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	b := h.browser()
	b.MustLogin("alice") // before alice had a factor
	old := b.SessionCookie()
	h.Enrol("alice")
	b.Login("alice", logintest.Passwords["alice"], "/")
	if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther {
		t.Fatalf("second factor: %d", r.Status)
	}
	if now := b.SessionCookie(); now == "" || now == old {
		t.Fatal("the session id did not change")
	}
	stale := h.browser()
	stale.SetCookie(h.P.Manager().CookieName(), old)
	if stale.APIStatus() != http.StatusUnauthorized {
		t.Error("the old session id still works")
	}
}

// TestSecondFactorPendingExpiresAndIsBound: the pending state lasts five
// minutes and works only beside the form cookie it was made with.
func TestSecondFactorPendingExpiresAndIsBound(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	h.Enrol("alice")

	b := h.passwordGiven("alice")
	thief := h.browser()
	thief.FormToken()
	thief.SetCookie(secondfactor.PendingCookie, b.Cookie(secondfactor.PendingCookie))
	if r := thief.SecondFactor(h.Code(), "/"); r.Status != http.StatusUnauthorized {
		t.Fatalf("pending state in another browser: %d", r.Status)
	}

	h.Clock.Advance(secondfactor.PendingLifetime + time.Second)
	if r := b.Get(secondfactor.SecondFactorPath, true); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), h.P.LoginPath()) {
		t.Fatalf("GET after expiry: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusUnauthorized {
		t.Fatalf("POST after expiry: %d", r.Status)
	}
	if b.SessionCookie() != "" {
		t.Fatal("an expired pending state made a session")
	}
	// JSON for an API client, by the one refusal rule.
	req, _ := http.NewRequest(http.MethodPost, h.Srv.URL+secondfactor.SecondFactorPath, strings.NewReader(url.Values{"code": {"1"}, "csrf_token": {b.Token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if r := b.Do(req); r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("API client: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}

// TestSecondFactorSpentPendingPage: a pending state whose step was
// completed (here, a copy of the browser's cookies taken before) gets no
// code form on GET, which could only fail: the sign-in page says the
// sign-in expired or was completed (401), and the pending cookie is
// dropped.
func TestSecondFactorSpentPendingPage(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	h.Enrol("alice")
	b := h.passwordGiven("alice")
	copied := h.browser()
	for _, name := range []string{h.P.Manager().FormCookieName(), secondfactor.PendingCookie} {
		copied.SetCookie(name, b.Cookie(name))
	}
	if r := copied.Get(secondfactor.SecondFactorPath, true); r.Status != http.StatusOK || !strings.Contains(r.Body, `name="code"`) {
		t.Fatalf("GET before the step completed: %d, code form shown: %v", r.Status, strings.Contains(r.Body, `name="code"`))
	}
	if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther {
		t.Fatalf("second factor: %d", r.Status)
	}
	r := copied.Get(secondfactor.SecondFactorPath, true)
	if r.Status != http.StatusUnauthorized || strings.Contains(r.Body, `name="code"`) ||
		!strings.Contains(r.Body, "expired or was completed already") || !strings.Contains(r.Body, `name="password"`) {
		t.Fatalf("GET after the step completed: %d\n%s", r.Status, r.Body)
	}
	if copied.Cookie(secondfactor.PendingCookie) != "" {
		t.Error("the spent pending cookie was kept")
	}
}

// TestSecondFactorRecoveryCode: a recovery code completes the step once.
func TestSecondFactorRecoveryCode(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	codes := h.Enrol("alice")
	b := h.passwordGiven("alice")
	if r := b.SecondFactor(strings.ToLower(codes[2]), "/"); r.Status != http.StatusSeeOther {
		t.Fatalf("recovery code: %d", r.Status)
	}
	if u, _ := b.User(); u.SecondFactor != "recovery" {
		t.Fatalf("factor %q, want recovery", u.SecondFactor)
	}
	again := h.passwordGiven("alice")
	if r := again.SecondFactor(codes[2], "/"); r.Status != http.StatusUnauthorized {
		t.Fatalf("the recovery code twice: %d", r.Status)
	}
	if rec, _ := h.P.Factors().Lookup("alice"); len(rec.Recovery) != factors.RecoveryCount-1 {
		t.Errorf("%d codes left", len(rec.Recovery))
	}
}

// TestSecondFactorThrottleConcurrent: wrong codes sent together count
// against the name's limit exactly: max_user_failures of them are
// answered 401, every other one 429, and then the right code is refused
// too.
func TestSecondFactorThrottleConcurrent(t *testing.T) {
	const limit, tries = 4, 24
	h := newFactorHarness(t, login.SecondFactorOptional, func(c *login.Config) { c.MaxUserFailures = limit; c.MaxFailures = 1000 })
	h.Enrol("alice")
	b := h.passwordGiven("alice")
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range tries {
		wg.Go(func() {
			r := b.SecondFactor("999999", "/")
			mu.Lock()
			counts[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[http.StatusUnauthorized] != limit || counts[http.StatusTooManyRequests] != tries-limit {
		t.Fatalf("statuses %v, want %d×401 and %d×429", counts, limit, tries-limit)
	}
	if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusTooManyRequests {
		t.Fatalf("the right code while blocked: %d, want 429", r.Status)
	}
	// The password counts against the same limit.
	if r := h.browser().Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusTooManyRequests {
		t.Fatalf("the password while blocked: %d, want 429", r.Status)
	}
}

// TestSecondFactorRequiredEnrolment: with required, a user without a
// factor is sent to the enrolment after the password, cannot reach
// anything else nor skip it, and is shown ten recovery codes once.
func TestSecondFactorRequiredEnrolment(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorRequired, nil)
	b := h.browser()
	r := b.Login("bob", logintest.Passwords["bob"], "/api/backups")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.EnrolPath+"?next=%2Fapi%2Fbackups" {
		t.Fatalf("password: %d %s", r.Status, r.Header.Get("Location"))
	}
	// No skipping: not the catalog, not the API, not the step.
	if b.APIStatus() != http.StatusUnauthorized {
		t.Error("the API answers before enrolment")
	}
	if r := b.Get(secondfactor.SecondFactorPath, true); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.EnrolPath) {
		t.Errorf("the step before enrolment: %d %s", r.Status, r.Header.Get("Location"))
	}
	if r := b.SecondFactor("123456", "/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.EnrolPath) {
		t.Errorf("a code before enrolment: %d %s", r.Status, r.Header.Get("Location"))
	}
	page := b.Get(secondfactor.EnrolPath+"?next=%2Fapi%2Fbackups", true)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, "<svg") {
		t.Fatalf("enrolment page: %d", page.Status)
	}
	secret := between(page.Body, `id="totp-secret">`, "<")
	enrolment, _ := logintest.Field(page.Body, "enrolment")
	if secret == "" || enrolment == "" || strings.Contains(enrolment, secret) {
		t.Fatalf("secret %q, enrolment field %q", secret, enrolment)
	}
	post := func(code, enrolment string) reply {
		return b.Post(secondfactor.EnrolPath, url.Values{"code": {code}, "csrf_token": {b.Token}, "next": {"/api/backups"}, "enrolment": {enrolment}})
	}
	if r := post("000000", enrolment); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, secret) {
		t.Fatalf("wrong code: %d (the page must show the same secret again)", r.Status)
	}
	if _, st := h.P.Factors().Lookup("bob"); st != factors.None {
		t.Fatal("a wrong code stored something")
	}
	if r := post("123456", "forged"); r.Status != http.StatusUnauthorized {
		t.Fatalf("a forged enrolment field: %d", r.Status)
	}
	code, _ := factors.TOTPCode(secret, h.Clock.Now())
	r = post(code, enrolment)
	if r.Status != http.StatusOK || strings.Count(r.Body, "<li>") != factors.RecoveryCount || !strings.Contains(r.Body, `href="/api/backups"`) {
		t.Fatalf("right code: %d", r.Status)
	}
	if u, ok := b.User(); !ok || u.SecondFactor != "totp" {
		t.Fatalf("session: %+v %v", u, ok)
	}
	if b.APIStatus() != http.StatusOK {
		t.Fatal("no access after enrolment")
	}
	rec, st := h.P.Factors().Lookup("bob")
	if st != factors.Enrolled || len(rec.Recovery) != factors.RecoveryCount {
		t.Fatalf("bob's record: %v %+v", st, rec)
	}
	if first := between(r.Body, "<li>", "</li>"); logintest.FactorKeys(t).MatchRecovery("bob", first, rec.Recovery) < 0 {
		t.Error("the codes shown are not the ones stored")
	}
	// The enrolment cannot be replayed to replace the factor.
	if r := post(code, enrolment); r.Status == http.StatusOK {
		t.Fatal("the enrolment form worked twice")
	}
}

// TestSecondFactorRemovedWithRequired: an administrator's reset ends the
// sessions of a user when a factor is required, and their next sign-in
// enrols again.
func TestSecondFactorRemovedWithRequired(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorRequired, nil)
	h.Enrol("alice")
	b := h.passwordGiven("alice")
	if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther || b.APIStatus() != http.StatusOK {
		t.Fatalf("sign-in: %d", r.Status)
	}
	if err := factors.Edit(h.P.Factors().Path(), logintest.FactorKeys(t), func(d *factors.Doc) error { d.Delete("alice"); return nil }); err != nil {
		t.Fatal(err)
	}
	h.P.Reload()
	if b.APIStatus() != http.StatusUnauthorized {
		t.Fatal("the session outlived the reset")
	}
	if r := b.Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.EnrolPath {
		t.Fatalf("sign-in after the reset: %d %s, want the enrolment", r.Status, r.Header.Get("Location"))
	}
}

// TestSecondFactorBrokenRecordFailsClosed: a line that does not parse, or
// a secret that does not decrypt, never means "no factor": the user is
// refused after the right password, and logged with the file and line.
func TestSecondFactorBrokenRecordFailsClosed(t *testing.T) {
	cases := []struct {
		name     string
		text     func(*harness) string
		refused  []string
		admitted []string
	}{
		{"broken json", func(*harness) string { return "alice:{\"totp\":\n" }, []string{"alice"}, []string{"bob"}},
		{"another key", func(h *harness) string {
			other, _ := factors.NewKeys([]byte(strings.Repeat("k", 40)))
			return `alice:{"totp":{"secret":"` + other.SealTOTP("alice", logintest.TOTPSecret) + `","added":"2025-01-01T00:00:00Z"}}` + "\n"
		}, []string{"alice"}, []string{"bob"}},
		{"damaged name", func(*harness) string { return "alic:{}x\n" }, []string{"alice", "bob"}, nil},
		{"no name", func(*harness) string { return "{\"totp\":{}}\n" }, []string{"alice", "bob"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFactorHarness(t, login.SecondFactorOptional, nil)
			if err := os.WriteFile(h.P.Factors().Path(), []byte(c.text(h)), 0o600); err != nil {
				t.Fatal(err)
			}
			h.P.Reload()
			if !strings.Contains(h.Logs.String(), h.P.Factors().Path()) || !strings.Contains(h.Logs.String(), "line=1") {
				t.Errorf("the problem is not logged with file and line:\n%s", h.Logs)
			}
			for _, u := range c.refused {
				b := h.browser()
				if r := b.Login(u, logintest.Passwords[u], "/"); r.Status != http.StatusForbidden || b.SessionCookie() != "" || b.Cookie(secondfactor.PendingCookie) != "" {
					t.Errorf("%s: %d, want 403 and nothing granted", u, r.Status)
				}
			}
			for _, u := range c.admitted {
				if r := h.browser().Login(u, logintest.Passwords[u], "/"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/" {
					t.Errorf("%s: %d %s, want the password alone", u, r.Status, r.Header.Get("Location"))
				}
			}
		})
	}
}

// between returns the text of s between the first start and the end
// after it.
func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, end)
	return v
}

// TestSecondFactorFileFollowed: the factors file is read again when it
// changes, as the user file is: a factor enrolled by the command while
// the service runs is asked for at the next sign-in, and a line broken by
// hand stops its user.
func TestSecondFactorFileFollowed(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, func(c *login.Config) { c.PollInterval = 10 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.P.Watch(ctx)
	keys := logintest.FactorKeys(t)
	until := func(what string, ok func() bool) {
		t.Helper()
		testkit.WaitUntil(t, 5*time.Second, ok, func() string { return "the change was not seen: " + what })
	}
	if err := factors.Edit(h.P.Factors().Path(), keys, func(d *factors.Doc) error {
		return d.Put(&factors.Record{User: "alice", TOTP: &factors.TOTP{Sealed: keys.SealTOTP("alice", logintest.TOTPSecret)}})
	}); err != nil {
		t.Fatal(err)
	}
	until("enrolled", func() bool { _, st := h.P.Factors().Lookup("alice"); return st == factors.Enrolled })
	if r := h.browser().Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.SecondFactorPath {
		t.Fatalf("after enrolment: %d %s", r.Status, r.Header.Get("Location"))
	}
	logintest.WriteFile(t, h.P.Factors().Path(), "alice:{\"totp\":\n")
	until("broken", func() bool { _, st := h.P.Factors().Lookup("alice"); return st == factors.Broken })
	if r := h.browser().Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusForbidden {
		t.Fatalf("after a broken edit: %d", r.Status)
	}
}

// TestSecondFactorRequiredEndsPasswordSessions: once a second factor is
// required, a session made with a password alone no longer stands, even
// one kept across the restart that turned it on.
func TestSecondFactorRequiredEndsPasswordSessions(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	h.Enrol("alice")
	bob := h.browser()
	bob.MustLogin("bob")
	alice := h.passwordGiven("alice")
	if r := alice.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther {
		t.Fatalf("alice: %d", r.Status)
	}
	h.Stop()
	h.Cfg.SecondFactor = login.SecondFactorRequired
	h.Start()
	bob.H, alice.H = h.Harness, h.Harness
	if bob.APIStatus() != http.StatusUnauthorized {
		t.Error("a password-only session stands with required")
	}
	if alice.APIStatus() != http.StatusOK {
		t.Error("a session made with a second factor was ended")
	}
}
