package passwordauth

import (
	"net/http"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
)

// Admit turns a throttling verdict into the error that refuses an attempt,
// or nil when v lets it go ahead, and writes what the verdict says to a's
// log, the same way for every type that throttles:
//
//   - the end of a block is logged once (Audit.BlockEnded, naming key);
//   - a blocked key is refused with a *refusal.RetryError, its first refusal
//     logged as a refused attempt of user and each one counted
//     (Audit.Throttled);
//   - an attempt that found every slot of its key taken by others in flight
//     for as long as it could wait (v.Busy) is refused with a
//     *refusal.RetryError too, but neither logged nor counted: nothing is
//     known against it.
func Admit(a auth.Audit, r *http.Request, typ string, v throttle.Verdict, key, user string) error {
	if v.BlockEnded > 0 {
		a.BlockEnded(r, typ, key, v.BlockEnded)
	}
	switch {
	case v.OK:
		return nil
	case v.Busy:
		return &refusal.RetryError{After: v.RetryAfter}
	}
	a.Throttled(typ)
	if v.FirstRefusal {
		a.Refused(r, typ, auth.ReasonThrottled, user)
	}
	return &refusal.RetryError{After: v.RetryAfter}
}
