package secondfactor

import (
	"net/http"
	"time"

	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
)

// mayBegin counts one begin of a passkey ceremony for a client not
// signed in (the passkey-only sign-in, the second step, the enrolment)
// against the limits of its address and of every address together
// (throttle.Rate's defaults). false: a 429 with Retry-After is written.
func (s *Step) mayBegin(w http.ResponseWriter, r *http.Request) bool {
	ok, after := s.begins.Take(throttle.AddrKey(peer.Of(r).Addr))
	return s.begunOK(w, r, ok, after)
}

// userMayBegin counts one passkey registration step of the signed-in user
// against the user's limit. false: a 429 with Retry-After is written.
func (s *Step) userMayBegin(w http.ResponseWriter, r *http.Request, user string) bool {
	ok, after := s.userBegins.Take(user)
	return s.begunOK(w, r, ok, after)
}

// begunOK answers a refused begin (ok false) with 429.
func (s *Step) begunOK(w http.ResponseWriter, r *http.Request, ok bool, after time.Duration) bool {
	if !ok {
		s.cfg.Errs.Error(w, r, &refusal.RateError{After: after})
	}
	return ok
}
