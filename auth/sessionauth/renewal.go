package sessionauth

import (
	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/session"
)

// RenewalKey is the [authentication] key of the session types that says
// which requests renew a session's idle deadline.
const RenewalKey = "idle_renewal"

// LoadRenewal reads idle_renewal from s: "navigation" (the default) or
// "any". Any other value is an error at the key's line that lists the
// valid ones; the default is returned with it.
func LoadRenewal(s auth.Section) session.Renewal {
	v := s.String(RenewalKey, "")
	r, err := session.ParseRenewal(v)
	if err != nil {
		s.Errorf(RenewalKey, "unknown value %q; valid values are navigation (only a person's page loads renew the idle deadline) and any (every request does, background polling included)", v)
		return session.RenewNavigation
	}
	return r
}
