package secondfactor_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// finisher is the last request of an enrolment, made ready: sending it
// stores the factor or is refused. It runs on its own goroutine, so it
// reports the status (0 when the request failed) instead of failing the
// test.
type finisher func() int

// send makes req with b's cookies and returns the status, 0 on error.
func (b *browser) send(req *http.Request) int {
	resp, err := b.C.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// totpEnrolment readies alice's TOTP enrolment at the sign-in
// (second_factor = required): the password, the enrolment page, and a
// code of its secret at the clock plus ahead (a step the other enrolment
// does not use, since a step is spent per user).
func totpEnrolment(h *harness, ahead time.Duration) finisher {
	b := h.passwordGiven("alice")
	page := b.Get(secondfactor.EnrolPath, true)
	sealed, ok1 := logintest.Field(page.Body, "enrolment")
	tok, ok2 := logintest.Field(page.Body, "csrf_token")
	_, rest, ok3 := strings.Cut(page.Body, `id="totp-secret">`)
	secret, _, _ := strings.Cut(rest, "<")
	if page.Status != http.StatusOK || !ok1 || !ok2 || !ok3 {
		h.T.Fatalf("enrolment page: %d", page.Status)
	}
	code, err := factors.TOTPCode(secret, h.Clock.Now().Add(ahead))
	if err != nil {
		h.T.Fatal(err)
	}
	form := url.Values{"code": {code}, "csrf_token": {tok}, "enrolment": {sealed}, "next": {"/"}}.Encode()
	return func() int {
		req, _ := http.NewRequest(http.MethodPost, h.Srv.URL+secondfactor.EnrolPath, strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", h.Srv.URL)
		return b.send(req)
	}
}

// passkeyEnrolment readies alice's passkey enrolment at the sign-in
// (second_factor = required): the password and the registration begun.
func passkeyEnrolment(h *harness, _ time.Duration) finisher {
	b := h.passwordGiven("alice")
	tok := b.FormToken()
	r, ans := b.beginPasskey(secondfactor.EnrolPasskeyBegin, tok)
	if r.Status != http.StatusOK {
		h.T.Fatalf("enrolment begin: %d %s", r.Status, r.Body)
	}
	return jsonFinisher(b, secondfactor.EnrolPasskeyFinish, tok, finishBody(h.T, newSoftKey(h.T), ans, "Key"))
}

// passkeyRegistrations returns what readies a passkey registration of
// alice in one of two sessions signed in now, in turn, with her password
// given again (second_factor = optional: the sessions, made before she
// had a factor, stay good after).
func passkeyRegistrations(h *harness) func(*harness, time.Duration) finisher {
	var sessions [2]*browser
	for i := range sessions {
		sessions[i] = h.browser()
		sessions[i].MustLogin("alice")
	}
	n := 0
	return func(h *harness, _ time.Duration) finisher {
		n++
		return passkeyRegistration(h, sessions[n%2])
	}
}

// passkeyRegistration readies a passkey registration in b, alice's
// session, her password given again.
func passkeyRegistration(h *harness, b *browser) finisher {
	b.reauth("alice")
	tok := b.CSRF()
	r, ans := b.beginPasskey(secondfactor.PasskeysBeginPath, tok)
	if r.Status != http.StatusOK {
		h.T.Fatalf("registration begin: %d %s", r.Status, r.Body)
	}
	return jsonFinisher(b, secondfactor.PasskeysFinishPath, tok, finishBody(h.T, newSoftKey(h.T), ans, "Key"))
}

// jsonFinisher posts body to path as the passkey script does.
func jsonFinisher(b *browser, path, token string, body []byte) finisher {
	return func() int {
		req, _ := http.NewRequest(http.MethodPost, b.H.Srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set(sessionauth.CSRFHeader, token)
		req.Header.Set("Origin", b.H.Srv.URL)
		return b.send(req)
	}
}

// atOnce sends the finishers at the same instant (each on its own
// goroutine, released together) and returns their statuses in order.
func atOnce(fs ...finisher) []int {
	out := make([]int, len(fs))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, f := range fs {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			out[i] = f()
		}()
	}
	start.Done()
	done.Wait()
	return out
}

// TestEnrolmentsAtOnce: two enrolments of one user finishing at the same
// instant, of any two kinds, store exactly one factor; the other gets
// 409. Each pair runs many times, begun and sent in both orders; the
// check of the user's factors and the write are one step under the
// factors file's lock.
func TestEnrolmentsAtOnce(t *testing.T) {
	const runs = 10
	type ready func(h *harness, ahead time.Duration) finisher
	for _, tt := range []struct {
		name string
		mode login.SecondFactor
		// a and b ready the two enrolments; signedIn, when set, makes
		// both instead, from the harness.
		a, b     ready
		signedIn func(*harness) func(*harness, time.Duration) finisher
	}{
		{"totp and passkey at the sign-in", login.SecondFactorRequired, totpEnrolment, passkeyEnrolment, nil},
		{"totp and totp at the sign-in", login.SecondFactorRequired, totpEnrolment, totpEnrolment, nil},
		{"passkey and passkey at the sign-in", login.SecondFactorRequired, passkeyEnrolment, passkeyEnrolment, nil},
		{"passkey and passkey signed in", login.SecondFactorOptional, nil, nil, passkeyRegistrations},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newFactorHarness(t, tt.mode, func(c *login.Config) { c.MaxFailures, c.MaxUserFailures = 1000, 1000 })
			reset := tt.signedIn == nil // at the sign-in: alice must have no factor
			if !reset {
				tt.a = tt.signedIn(h)
				tt.b = tt.a
			}
			stored := 0
			for run := range runs {
				h.Clock.Advance(time.Minute) // fresh TOTP steps
				first, second := tt.a, tt.b
				if run%2 == 1 {
					first, second = second, first
				}
				f1, f2 := first(h, 0), second(h, 30*time.Second)
				var got []int
				if run%4 < 2 {
					got = atOnce(f1, f2)
				} else {
					got = atOnce(f2, f1)
				}
				won, conflicts := 0, 0
				for _, s := range got {
					switch s {
					case http.StatusOK, http.StatusSeeOther:
						won++
					case http.StatusConflict:
						conflicts++
					}
				}
				if won != 1 || conflicts != 1 {
					t.Fatalf("run %d: statuses %v, want one success and one 409", run, got)
				}
				stored++
				rec, _ := h.P.Factors().Lookup("alice")
				n := 0
				if rec != nil {
					n = len(rec.Passkeys)
					if rec.TOTP != nil {
						n++
					}
				}
				if want := map[bool]int{true: 1, false: stored}[reset]; n != want {
					t.Fatalf("run %d: alice has %d factors, want %d", run, n, want)
				}
				if reset {
					resetFactors(h, "alice")
				}
			}
		})
	}
}

// resetFactors removes every factor of user, as `user factors -reset`
// does, and lets the provider see it.
func resetFactors(h *harness, user string) {
	h.T.Helper()
	err := factors.Edit(h.P.Factors().Path(), logintest.FactorKeys(h.T), func(d *factors.Doc) error {
		d.Delete(user)
		return nil
	})
	if err == nil {
		err = h.P.Factors().Reload()
	}
	if err != nil {
		h.T.Fatal(err)
	}
}
