package login

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/loginfix"
	"github.com/backupweb/backupweb/internal/throttle"
)

// signInWithCode signs alice in with her password and the current TOTP
// code in a new browser, and returns that browser, its spent pending state
// and the code.
func (h *harness) signInWithCode(t *testing.T) (*browser, string, string) {
	t.Helper()
	b := h.browser()
	if r := b.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.SecondFactorPath) {
		t.Fatalf("password: %d %s", r.status, r.header.Get("Location"))
	}
	pendingValue, code := b.cookie(secondfactor.PendingCookie), h.code()
	if r := b.secondFactor(code, "/"); r.status != http.StatusSeeOther {
		t.Fatalf("code: %d", r.status)
	}
	return b, pendingValue, code
}

// TestSpentTokensNotFlushed is the flush of issue 28: a signed-in user's
// passkey registrations cannot push spent tokens out (they are limited per
// user, 429, and kept in tables of their own), and a table of spent TOTP
// steps and pending states filled to the brim refuses the new sign-in
// (503 with Retry-After) while the spent code and the spent pending state
// stay refused; once the oldest expire, sign-ins go on.
func TestSpentTokensNotFlushed(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, func(c *Config) { c.maxSpent = 40 })
	codes := h.enrol("alice")
	signed, pendingValue, code := h.signInWithCode(t)

	// Registrations of the signed-in user, who gave the password again:
	// begin and finish pairs, until the user's limit answers 429.
	signed.reauth("alice")
	token := signed.csrf()
	var last reply
	pairs := 0
	for ; pairs < throttle.DefaultRatePerKey; pairs++ {
		if last = signed.postJSON(secondfactor.PasskeysBeginPath, token, []byte(`{}`)); last.status != http.StatusOK {
			break
		}
		if last = signed.postJSON(secondfactor.PasskeysFinishPath, token, []byte(`{"ceremony":"x","name":"k","credential":{}}`)); last.status != http.StatusBadRequest {
			break
		}
	}
	if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" || !strings.Contains(last.body, "Too many sign-ins or passkey requests") {
		t.Fatalf("registration %d of one user: %d %q, want 429 with Retry-After", pairs, last.status, last.body)
	}

	// The table of spent tokens filled to the brim.
	for i := 0; ; i++ {
		_, err := h.p.spend(context.Background(), "filler", strconv.Itoa(i), secondfactor.PendingLifetime)
		if refusal.ReplyTo(err).Refusal == refusal.TokensFull {
			break
		}
		if err != nil || i > 100 {
			t.Fatalf("filling the table: %v after %d", err, i)
		}
	}
	fresh := h.browser()
	fresh.login("alice", loginfix.Passwords["alice"], "/")
	if r := fresh.secondFactor(code, "/"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "used already") {
		t.Fatalf("the spent code after the flush: %d", r.status)
	}
	signed.setCookie(secondfactor.PendingCookie, pendingValue)
	if r := signed.secondFactor(codes[0], "/"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "expired or was completed") {
		t.Fatalf("the spent pending state after the flush: %d", r.status)
	}
	h.clock.Advance(30 * time.Second)
	r := fresh.secondFactor(h.code(), "/")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, refusal.TokensFull.Message()) {
		t.Fatalf("a new code with the table full: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	h.clock.Advance(secondfactor.PendingLifetime)
	h.signInWithCode(t)
}

// TestSpentTokensSurviveRestart: with store = file, a restart between two
// uses changes nothing: the TOTP code and the pending state spent before
// it are refused after it.
func TestSpentTokensSurviveRestart(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	h.enrol("alice")
	spent, pendingValue, code := h.signInWithCode(t)
	h.stop()
	h.start()
	fresh := h.browser()
	fresh.login("alice", loginfix.Passwords["alice"], "/")
	if r := fresh.secondFactor(code, "/"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "used already") {
		t.Fatalf("the code spent before the restart: %d", r.status)
	}
	h.clock.Advance(30 * time.Second)
	spent.setCookie(secondfactor.PendingCookie, pendingValue)
	if r := spent.secondFactor(h.code(), "/"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, "expired or was completed") {
		t.Fatalf("the pending state spent before the restart: %d", r.status)
	}
}

// TestSpentFileBroken: a file of spent tokens that is not what the
// provider writes stops it from starting, naming the file, rather than
// letting it forget what was spent.
func TestSpentFileBroken(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	h.stop()
	path := h.env.StateDir + "/" + SpentFile
	loginfix.WriteFile(t, path, "not a table\n")
	if _, err := New(h.cfg, h.env); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("New over a broken %s: %v", SpentFile, err)
	}
}
