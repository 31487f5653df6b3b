package login

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit"
)

// TestSecondFactorOffChangesNothing: with second_factor off, a user with
// a factor in the file signs in with the password alone and the step's
// routes answer 404.
func TestSecondFactorOffChangesNothing(t *testing.T) {
	h := newHarness(t, nil)
	keys := factorKeys(t)
	factors.Edit(h.usersPath+factors.Suffix, keys, func(d *factors.Doc) error {
		return d.Put(&factors.Record{User: "alice", TOTP: &factors.TOTP{Sealed: keys.SealTOTP("alice", testTOTPSecret)}})
	})
	b := h.browser()
	if r := b.login("alice", testPasswords["alice"], "/"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
		t.Fatalf("login: %d %s", r.status, r.header.Get("Location"))
	}
	if b.apiStatus() != http.StatusOK {
		t.Error("the password alone does not sign in")
	}
	if r := h.browser().get(secondfactor.SecondFactorPath, true); r.status != http.StatusNotFound {
		t.Errorf("GET %s: %d, want 404", secondfactor.SecondFactorPath, r.status)
	}
}

// TestSecondFactorFlow walks the step: the pending state grants nothing,
// a wrong code is 401, the right one starts a fresh session naming the
// factor, and neither the code nor the pending state works twice.
func TestSecondFactorFlow(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	h.enrol("alice")

	// bob has no factor: the password alone, as before.
	bob := h.browser()
	if r := bob.login("bob", testPasswords["bob"], "/"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
		t.Fatalf("bob: %d %s", r.status, r.header.Get("Location"))
	}
	if u, ok := bob.user(); !ok || u.SecondFactor != "" {
		t.Fatalf("bob: %+v %v", u, ok)
	}

	b := h.browser()
	r := b.login("alice", testPasswords["alice"], "/backups/nightly.tar.gz")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.SecondFactorPath+"?next=%2Fbackups%2Fnightly.tar.gz" {
		t.Fatalf("password: %d %q", r.status, r.header.Get("Location"))
	}
	if b.sessionCookie() != "" || b.cookie(secondfactor.PendingCookie) == "" {
		t.Fatal("the password step made a session, or no pending state")
	}
	// The pending state grants nothing: no page, no API, no logout.
	if r := b.get("/", true); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), h.p.LoginPath()) {
		t.Errorf("GET / while pending: %d %s", r.status, r.header.Get("Location"))
	}
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("API while pending: %d", s)
	}
	if r := b.get("/backups/nightly.tar.gz", false); r.status != http.StatusUnauthorized {
		t.Errorf("a backup while pending: %d", r.status)
	}
	if _, ok := b.user(); ok {
		t.Error("the pending state identifies a user")
	}
	if r := b.post("/logout", url.Values{"csrf_token": {b.token}}); r.status == http.StatusOK {
		t.Errorf("logout with the form token while pending: %d", r.status)
	}

	page := b.get(secondfactor.SecondFactorPath+"?next=%2Fbackups%2Fnightly.tar.gz", true)
	if page.status != http.StatusOK || !strings.Contains(page.body, `name="code"`) || !strings.Contains(page.body, `id="passkey-slot"`) {
		t.Fatalf("the step's page: %d", page.status)
	}
	if r := b.secondFactor("000000", "/"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, refusal.WrongCode.Message()) {
		t.Fatalf("wrong code: %d", r.status)
	}
	if r := b.secondFactor("", "/"); r.status != http.StatusUnauthorized {
		t.Fatalf("empty code: %d", r.status)
	}
	if r := b.post(secondfactor.SecondFactorPath, url.Values{"code": {h.code()}, "csrf_token": {"forged"}}); r.status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d", r.status)
	}
	pendingValue := b.cookie(secondfactor.PendingCookie)
	code := h.code()
	r = b.secondFactor(code, "/backups/nightly.tar.gz")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/backups/nightly.tar.gz" {
		t.Fatalf("right code: %d %s", r.status, r.header.Get("Location"))
	}
	first := b.sessionCookie()
	if first == "" || b.cookie(secondfactor.PendingCookie) != "" {
		t.Fatal("no session, or the pending state stayed")
	}
	if u, ok := b.user(); !ok || u.Name != "alice" || u.SecondFactor != "totp" {
		t.Fatalf("session: %+v %v", u, ok)
	}
	if b.apiStatus() != http.StatusOK {
		t.Fatal("the session grants nothing")
	}

	// The same code again, from a fresh password step; the spent pending
	// state, kept by the browser, with the next code.
	h.refusesReplays(t, h.browser(), b, code, pendingValue)
	if b.sessionCookie() != first {
		t.Error("the session changed")
	}
}

// TestSecondFactorSessionRotates: a browser that held a session gets a
// new id after the second factor, and the old id is dead.
func TestSecondFactorSessionRotates(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	b := h.browser()
	b.mustLogin("alice") // before alice had a factor
	old := b.sessionCookie()
	h.enrol("alice")
	b.login("alice", testPasswords["alice"], "/")
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther {
		t.Fatalf("second factor: %d", r.status)
	}
	if now := b.sessionCookie(); now == "" || now == old {
		t.Fatal("the session id did not change")
	}
	stale := h.browser()
	stale.setCookie(h.p.Manager().CookieName(), old)
	if stale.apiStatus() != http.StatusUnauthorized {
		t.Error("the old session id still works")
	}
}

// TestSecondFactorPendingExpiresAndIsBound: the pending state lasts five
// minutes and works only beside the form cookie it was made with.
func TestSecondFactorPendingExpiresAndIsBound(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	h.enrol("alice")

	b := h.passwordGiven("alice")
	thief := h.browser()
	thief.formToken()
	thief.setCookie(secondfactor.PendingCookie, b.cookie(secondfactor.PendingCookie))
	if r := thief.secondFactor(h.code(), "/"); r.status != http.StatusUnauthorized {
		t.Fatalf("pending state in another browser: %d", r.status)
	}

	h.clock.Advance(secondfactor.PendingLifetime + time.Second)
	if r := b.get(secondfactor.SecondFactorPath, true); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), h.p.LoginPath()) {
		t.Fatalf("GET after expiry: %d %s", r.status, r.header.Get("Location"))
	}
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusUnauthorized {
		t.Fatalf("POST after expiry: %d", r.status)
	}
	if b.sessionCookie() != "" {
		t.Fatal("an expired pending state made a session")
	}
	// JSON for an API client, by the one refusal rule.
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+secondfactor.SecondFactorPath, strings.NewReader(url.Values{"code": {"1"}, "csrf_token": {b.token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if r := b.do(req); r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("API client: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

// TestSecondFactorSpentPendingPage: a pending state whose step was
// completed (here, a copy of the browser's cookies taken before) gets no
// code form on GET, which could only fail: the sign-in page says the
// sign-in expired or was completed (401), and the pending cookie is
// dropped.
func TestSecondFactorSpentPendingPage(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	h.enrol("alice")
	b := h.passwordGiven("alice")
	copied := h.browser()
	for _, name := range []string{h.p.Manager().FormCookieName(), secondfactor.PendingCookie} {
		copied.setCookie(name, b.cookie(name))
	}
	if r := copied.get(secondfactor.SecondFactorPath, true); r.status != http.StatusOK || !strings.Contains(r.body, `name="code"`) {
		t.Fatalf("GET before the step completed: %d, code form shown: %v", r.status, strings.Contains(r.body, `name="code"`))
	}
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther {
		t.Fatalf("second factor: %d", r.status)
	}
	r := copied.get(secondfactor.SecondFactorPath, true)
	if r.status != http.StatusUnauthorized || strings.Contains(r.body, `name="code"`) ||
		!strings.Contains(r.body, "expired or was completed already") || !strings.Contains(r.body, `name="password"`) {
		t.Fatalf("GET after the step completed: %d\n%s", r.status, r.body)
	}
	if copied.cookie(secondfactor.PendingCookie) != "" {
		t.Error("the spent pending cookie was kept")
	}
}

// TestSecondFactorRecoveryCode: a recovery code completes the step once.
func TestSecondFactorRecoveryCode(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	codes := h.enrol("alice")
	b := h.passwordGiven("alice")
	if r := b.secondFactor(strings.ToLower(codes[2]), "/"); r.status != http.StatusSeeOther {
		t.Fatalf("recovery code: %d", r.status)
	}
	if u, _ := b.user(); u.SecondFactor != "recovery" {
		t.Fatalf("factor %q, want recovery", u.SecondFactor)
	}
	again := h.passwordGiven("alice")
	if r := again.secondFactor(codes[2], "/"); r.status != http.StatusUnauthorized {
		t.Fatalf("the recovery code twice: %d", r.status)
	}
	if rec, _ := h.p.Factors().Lookup("alice"); len(rec.Recovery) != factors.RecoveryCount-1 {
		t.Errorf("%d codes left", len(rec.Recovery))
	}
}

// TestSecondFactorThrottleConcurrent: wrong codes sent together count
// against the name's limit exactly: max_user_failures of them are
// answered 401, every other one 429, and then the right code is refused
// too.
func TestSecondFactorThrottleConcurrent(t *testing.T) {
	const limit, tries = 4, 24
	h := newFactorHarness(t, SecondFactorOptional, func(c *Config) { c.MaxUserFailures = limit; c.MaxFailures = 1000 })
	h.enrol("alice")
	b := h.passwordGiven("alice")
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range tries {
		wg.Go(func() {
			r := b.secondFactor("999999", "/")
			mu.Lock()
			counts[r.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[http.StatusUnauthorized] != limit || counts[http.StatusTooManyRequests] != tries-limit {
		t.Fatalf("statuses %v, want %d×401 and %d×429", counts, limit, tries-limit)
	}
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("the right code while blocked: %d, want 429", r.status)
	}
	// The password counts against the same limit.
	if r := h.browser().login("alice", testPasswords["alice"], "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("the password while blocked: %d, want 429", r.status)
	}
}

// TestSecondFactorRequiredEnrolment: with required, a user without a
// factor is sent to the enrolment after the password, cannot reach
// anything else nor skip it, and is shown ten recovery codes once.
func TestSecondFactorRequiredEnrolment(t *testing.T) {
	h := newFactorHarness(t, SecondFactorRequired, nil)
	b := h.browser()
	r := b.login("bob", testPasswords["bob"], "/api/backups")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.EnrolPath+"?next=%2Fapi%2Fbackups" {
		t.Fatalf("password: %d %s", r.status, r.header.Get("Location"))
	}
	// No skipping: not the catalog, not the API, not the step.
	if b.apiStatus() != http.StatusUnauthorized {
		t.Error("the API answers before enrolment")
	}
	if r := b.get(secondfactor.SecondFactorPath, true); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.EnrolPath) {
		t.Errorf("the step before enrolment: %d %s", r.status, r.header.Get("Location"))
	}
	if r := b.secondFactor("123456", "/"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.EnrolPath) {
		t.Errorf("a code before enrolment: %d %s", r.status, r.header.Get("Location"))
	}
	page := b.get(secondfactor.EnrolPath+"?next=%2Fapi%2Fbackups", true)
	if page.status != http.StatusOK || !strings.Contains(page.body, "<svg") {
		t.Fatalf("enrolment page: %d", page.status)
	}
	secret := between(page.body, `id="totp-secret">`, "<")
	enrolment, _ := field(page.body, "enrolment")
	if secret == "" || enrolment == "" || strings.Contains(enrolment, secret) {
		t.Fatalf("secret %q, enrolment field %q", secret, enrolment)
	}
	post := func(code, enrolment string) reply {
		return b.post(secondfactor.EnrolPath, url.Values{"code": {code}, "csrf_token": {b.token}, "next": {"/api/backups"}, "enrolment": {enrolment}})
	}
	if r := post("000000", enrolment); r.status != http.StatusUnauthorized || !strings.Contains(r.body, secret) {
		t.Fatalf("wrong code: %d (the page must show the same secret again)", r.status)
	}
	if _, st := h.p.Factors().Lookup("bob"); st != factors.None {
		t.Fatal("a wrong code stored something")
	}
	if r := post("123456", "forged"); r.status != http.StatusUnauthorized {
		t.Fatalf("a forged enrolment field: %d", r.status)
	}
	code, _ := factors.TOTPCode(secret, h.clock.Now())
	r = post(code, enrolment)
	if r.status != http.StatusOK || strings.Count(r.body, "<li>") != factors.RecoveryCount || !strings.Contains(r.body, `href="/api/backups"`) {
		t.Fatalf("right code: %d", r.status)
	}
	if u, ok := b.user(); !ok || u.SecondFactor != "totp" {
		t.Fatalf("session: %+v %v", u, ok)
	}
	if b.apiStatus() != http.StatusOK {
		t.Fatal("no access after enrolment")
	}
	rec, st := h.p.Factors().Lookup("bob")
	if st != factors.Enrolled || len(rec.Recovery) != factors.RecoveryCount {
		t.Fatalf("bob's record: %v %+v", st, rec)
	}
	if first := between(r.body, "<li>", "</li>"); factorKeys(t).MatchRecovery("bob", first, rec.Recovery) < 0 {
		t.Error("the codes shown are not the ones stored")
	}
	// The enrolment cannot be replayed to replace the factor.
	if r := post(code, enrolment); r.status == http.StatusOK {
		t.Fatal("the enrolment form worked twice")
	}
}

// TestSecondFactorRemovedWithRequired: an administrator's reset ends the
// sessions of a user when a factor is required, and their next sign-in
// enrols again.
func TestSecondFactorRemovedWithRequired(t *testing.T) {
	h := newFactorHarness(t, SecondFactorRequired, nil)
	h.enrol("alice")
	b := h.passwordGiven("alice")
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther || b.apiStatus() != http.StatusOK {
		t.Fatalf("sign-in: %d", r.status)
	}
	if err := factors.Edit(h.p.Factors().Path(), factorKeys(t), func(d *factors.Doc) error { d.Delete("alice"); return nil }); err != nil {
		t.Fatal(err)
	}
	h.p.Reload()
	if b.apiStatus() != http.StatusUnauthorized {
		t.Fatal("the session outlived the reset")
	}
	if r := b.login("alice", testPasswords["alice"], "/"); r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.EnrolPath {
		t.Fatalf("sign-in after the reset: %d %s, want the enrolment", r.status, r.header.Get("Location"))
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
			return `alice:{"totp":{"secret":"` + other.SealTOTP("alice", testTOTPSecret) + `","added":"2025-01-01T00:00:00Z"}}` + "\n"
		}, []string{"alice"}, []string{"bob"}},
		{"damaged name", func(*harness) string { return "alic:{}x\n" }, []string{"alice", "bob"}, nil},
		{"no name", func(*harness) string { return "{\"totp\":{}}\n" }, []string{"alice", "bob"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFactorHarness(t, SecondFactorOptional, nil)
			if err := os.WriteFile(h.p.Factors().Path(), []byte(c.text(h)), 0o600); err != nil {
				t.Fatal(err)
			}
			h.p.Reload()
			if !strings.Contains(h.logs.String(), h.p.Factors().Path()) || !strings.Contains(h.logs.String(), "line=1") {
				t.Errorf("the problem is not logged with file and line:\n%s", h.logs)
			}
			for _, u := range c.refused {
				b := h.browser()
				if r := b.login(u, testPasswords[u], "/"); r.status != http.StatusForbidden || b.sessionCookie() != "" || b.cookie(secondfactor.PendingCookie) != "" {
					t.Errorf("%s: %d, want 403 and nothing granted", u, r.status)
				}
			}
			for _, u := range c.admitted {
				if r := h.browser().login(u, testPasswords[u], "/"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
					t.Errorf("%s: %d %s, want the password alone", u, r.status, r.header.Get("Location"))
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
	h := newFactorHarness(t, SecondFactorOptional, func(c *Config) { c.PollInterval = 10 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.p.Watch(ctx)
	keys := factorKeys(t)
	until := func(what string, ok func() bool) {
		t.Helper()
		testkit.WaitUntil(t, 5*time.Second, ok, func() string { return "the change was not seen: " + what })
	}
	if err := factors.Edit(h.p.Factors().Path(), keys, func(d *factors.Doc) error {
		return d.Put(&factors.Record{User: "alice", TOTP: &factors.TOTP{Sealed: keys.SealTOTP("alice", testTOTPSecret)}})
	}); err != nil {
		t.Fatal(err)
	}
	until("enrolled", func() bool { _, st := h.p.Factors().Lookup("alice"); return st == factors.Enrolled })
	if r := h.browser().login("alice", testPasswords["alice"], "/"); r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.SecondFactorPath {
		t.Fatalf("after enrolment: %d %s", r.status, r.header.Get("Location"))
	}
	writeFile(t, h.p.Factors().Path(), "alice:{\"totp\":\n")
	until("broken", func() bool { _, st := h.p.Factors().Lookup("alice"); return st == factors.Broken })
	if r := h.browser().login("alice", testPasswords["alice"], "/"); r.status != http.StatusForbidden {
		t.Fatalf("after a broken edit: %d", r.status)
	}
}

// TestSecondFactorRequiredEndsPasswordSessions: once a second factor is
// required, a session made with a password alone no longer stands, even
// one kept across the restart that turned it on.
func TestSecondFactorRequiredEndsPasswordSessions(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	h.enrol("alice")
	bob := h.browser()
	bob.mustLogin("bob")
	alice := h.passwordGiven("alice")
	if r := alice.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther {
		t.Fatalf("alice: %d", r.status)
	}
	h.stop()
	h.cfg.SecondFactor = SecondFactorRequired
	h.start()
	bob.h, alice.h = h, h
	if bob.apiStatus() != http.StatusUnauthorized {
		t.Error("a password-only session stands with required")
	}
	if alice.apiStatus() != http.StatusOK {
		t.Error("a session made with a second factor was ended")
	}
}
