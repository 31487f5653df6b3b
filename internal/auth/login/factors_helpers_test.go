package login

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit/loginfix"
)

// testTOTPSecret is alice's TOTP secret in the second-factor tests.
const testTOTPSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

// newFactorHarness is newHarness with second_factor set to mode.
func newFactorHarness(t testing.TB, mode SecondFactor, edit func(*Config)) *harness {
	t.Helper()
	return newHarness(t, func(c *Config) {
		c.SecondFactor = mode
		if edit != nil {
			edit(c)
		}
	})
}

// factorKeys returns the factors file's keys under the test secret.
func factorKeys(t testing.TB) *factors.Keys {
	t.Helper()
	k, err := factors.NewKeys(loginfix.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// enrol gives user the TOTP secret testTOTPSecret and ten recovery codes
// in the harness's factors file, as `backupweb user totp` and
// `recovery-codes` do, and returns the codes.
func (h *harness) enrol(user string) []string {
	h.t.Helper()
	keys := factorKeys(h.t)
	var codes []string
	err := h.p.state.EditFactors(context.Background(), user, func(rec *factors.Record) error {
		if len(rec.Handle) == 0 {
			rec.Handle = factors.NewHandle()
		}
		rec.TOTP = &factors.TOTP{Sealed: keys.SealTOTP(user, testTOTPSecret), Added: time.Now()}
		codes, rec.Recovery = keys.NewRecoveryCodes(user)
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return codes
}

// code returns the TOTP code of testTOTPSecret at the harness's clock.
func (h *harness) code() string {
	h.t.Helper()
	c, err := factors.TOTPCode(testTOTPSecret, h.clock.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// secondFactor posts code to the second-factor step with the form token
// the browser holds.
func (b *browser) secondFactor(code, next string) reply {
	b.t.Helper()
	return b.post(secondfactor.SecondFactorPath, url.Values{"code": {code}, "csrf_token": {b.token}, "next": {next}})
}

// cookie returns the value of the cookie name the jar holds, "" if none.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.h.srv.URL)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// setCookie puts a cookie in the jar, as a browser that kept it would.
func (b *browser) setCookie(name, value string) {
	u, _ := url.Parse(b.h.srv.URL)
	b.jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// reauthToken fetches the password page and returns its CSRF token (the
// session's).
func (b *browser) reauthToken() string {
	b.t.Helper()
	r := b.get(secondfactor.ReauthPath, true)
	tok, ok := field(r.body, "csrf_token")
	if r.status != http.StatusOK || !ok || tok == "" {
		b.t.Fatalf("GET %s: %d, no csrf_token", secondfactor.ReauthPath, r.status)
	}
	return tok
}

// reauth gives user's password again and fails the test unless it is
// accepted.
func (b *browser) reauth(user string) {
	b.t.Helper()
	r := b.post(secondfactor.ReauthPath, url.Values{"password": {loginfix.Passwords[user]}, "csrf_token": {b.reauthToken()}, "next": {"/"}})
	if r.status != http.StatusSeeOther {
		b.t.Fatalf("password again: %d %s", r.status, r.body)
	}
}

// postJSON posts body to path as the passkey script does, with the CSRF
// token in X-CSRF-Token.
func (b *browser) postJSON(path, token string, body []byte) reply {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(sessionauth.CSRFHeader, token)
	req.Header.Set("Origin", b.h.srv.URL)
	return b.do(req)
}
