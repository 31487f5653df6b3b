package secondfactor_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
)

// TestSecondFactorOneStepSpendsOneFactor: one pending state sent a TOTP
// code and a recovery code at the same instant completes once (one 303,
// one 401) and spends only the code that completed it: the loser's code
// still signs in afterwards.
func TestSecondFactorOneStepSpendsOneFactor(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, func(c *login.Config) { c.MaxUserFailures = 1000; c.MaxFailures = 1000 })
	codes := h.Enrol("alice")
	for round := range 6 {
		h.Clock.Advance(30 * time.Second) // a TOTP step no round used
		b := h.passwordGiven("alice")
		recovery, totp := codes[round], h.Code()
		var wg sync.WaitGroup
		status := map[string]int{}
		var mu sync.Mutex
		for _, code := range []string{totp, recovery} {
			wg.Go(func() {
				r := b.SecondFactor(code, "/")
				mu.Lock()
				status[code] = r.Status
				mu.Unlock()
			})
		}
		wg.Wait()
		won, lost := totp, recovery
		if status[recovery] == http.StatusSeeOther {
			won, lost = recovery, totp
		}
		if status[won] != http.StatusSeeOther || status[lost] != http.StatusUnauthorized {
			t.Fatalf("round %d: TOTP %d, recovery %d; want one 303 and one 401", round, status[totp], status[recovery])
		}
		if again := h.passwordGiven("alice"); again.SecondFactor(lost, "/").Status != http.StatusSeeOther {
			t.Fatalf("round %d: the losing code (%s) was spent by a step it did not complete", round, map[bool]string{true: "TOTP", false: "recovery"}[lost == totp])
		}
		if again := h.passwordGiven("alice"); again.SecondFactor(won, "/").Status != http.StatusUnauthorized {
			t.Fatalf("round %d: the winning code signs in again", round)
		}
	}
}
