package secondfactor_test

import (
	"encoding/json"
	"testing"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// harness is the login kit's harness, with the helpers of these tests.
type harness struct{ *logintest.Harness }

// browser is the login kit's browser, with the helpers of these tests.
type browser struct{ *logintest.Browser }

// reply is a response with its body read.
type reply = logintest.Reply

// newHarness serves a provider for alice and bob (see logintest.New).
func newHarness(t testing.TB, edit func(*login.Config)) *harness {
	t.Helper()
	return &harness{logintest.New(t, edit)}
}

// newHarnessWith is newHarness with prepare run just before the
// provider starts (see logintest.NewWith).
func newHarnessWith(t testing.TB, edit func(*login.Config), prepare func(*harness)) *harness {
	t.Helper()
	var wrap func(*logintest.Harness)
	if prepare != nil {
		wrap = func(h *logintest.Harness) { prepare(&harness{h}) }
	}
	return &harness{logintest.NewWith(t, edit, wrap)}
}

// newFactorHarness is newHarness with second_factor set to mode.
func newFactorHarness(t testing.TB, mode login.SecondFactor, edit func(*login.Config)) *harness {
	t.Helper()
	return &harness{logintest.NewFactors(t, mode, edit)}
}

// browser is a new browser of the harness.
func (h *harness) browser() *browser { return &browser{h.Harness.Browser()} }

// passwordGiven is a new browser that posted user's right password.
func (h *harness) passwordGiven(user string) *browser {
	return &browser{h.Harness.PasswordGiven(user)}
}

// refusesReplays checks that a second factor cannot be replayed (see
// logintest.Harness.RefusesReplays).
func (h *harness) refusesReplays(t *testing.T, fresh, spent *browser, code, pendingValue string) {
	t.Helper()
	h.Harness.RefusesReplays(t, fresh.Browser, spent.Browser, code, pendingValue)
}

// begunAnswer is the answer of a passkey begin route: the options for
// navigator.credentials and the ceremony's id.
type begunAnswer struct {
	Options  json.RawMessage `json:"options"`
	Ceremony string          `json:"ceremony"`
}

// The notices of the passkeys page.
const (
	msgPasskeyAdded   = "The passkey was added."
	msgPasskeyRemoved = "The passkey was removed."
)
