package login

import (
	"context"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
)

// secondFactor returns the second_factor in force.
func (p *Provider) secondFactor() SecondFactor { return SecondFactor(p.sf.Load()) }

// SecondFactor returns the second_factor in force.
func (p *Provider) SecondFactor() SecondFactor { return p.secondFactor() }

// factorsOn reports whether second_factor is optional or required now.
func (p *Provider) factorsOn() bool { return p.secondFactor() != SecondFactorOff }

// SetSecondFactor puts a new second_factor in force on a running provider
// (a reload of the configuration), in every direction: the factors file,
// the step's routes and the passkeys are made with the provider, and
// every check reads the mode in force. Turned on (optional, from off), a
// user with a factor is asked for it at the next sign-in, and a session
// of such a user made with the password alone is refused at its next
// request; required refuses every session made without a second factor.
// Turned off, the routes answer 404 and the password alone signs in.
func (p *Provider) SetSecondFactor(v SecondFactor) error {
	cur := p.secondFactor()
	if v == cur {
		return nil
	}
	if cur == SecondFactorOff {
		// The factors file may have changed while it was not watched.
		if f := p.Factors(); f != nil {
			if err := f.Reload(); err != nil {
				p.log.Error("auth: the factors file has problems; the users concerned cannot sign in until it is fixed", "auth_type", Name, "file", f.Path(), "err", err)
			}
		}
	}
	p.sf.Store(int32(v))
	p.log.Info("auth: second_factor changed on reload", "auth_type", Name, "from", cur.String(), "to", v.String())
	return nil
}

// refusal names why a session is no longer admitted (sessionauth's
// Options.Refusal): a session made with the password alone when a second
// factor is required, or that skipped the step while it was off for a
// user who has a factor; otherwise its user was removed or their password
// changed.
func (p *Provider) refusal(d session.Data) string {
	if !p.factorsOn() || d.Attrs.Get(AttrSecondFactor) != "" || !p.users.Load().admits(d.Username, d.Cred) {
		return auth.ReasonNotAdmitted
	}
	if p.secondFactor() == SecondFactorRequired {
		return access.ReasonSecondFactor
	}
	if st, err := p.state.Status(context.Background(), d.Username); err == nil && st == factors.Enrolled && d.Attrs.Get(AttrStepSkipped) != "" {
		return access.ReasonSecondFactor
	}
	return auth.ReasonNotAdmitted
}

// limits are the throttling keys in force.
type limits struct {
	passwordauth.Throttling
	maxUser int
}

// newCounters makes with count the failure counters of t and maxUser
// (max_user_failures): per client address, per user name and per device
// cookie.
func newCounters(deps auth.Deps, count passwordauth.NewCounter, t passwordauth.Throttling, maxUser int, wait time.Duration) (addr, user, device throttle.Counter) {
	addr = count(Name+".addr", throttle.Options{
		Max: t.MaxFailures, Window: t.FailureWindow, Now: deps.Clock(), Wait: wait,
		OnFull: func() { auth.LogFlood(deps.Log(), Name, "client addresses") },
	})
	user = count(Name+".user", throttle.Options{
		Max: maxUser, Window: t.FailureWindow, MaxBlock: maxUserBlock, Now: deps.Clock(), Wait: wait,
		OnFull: func() { auth.LogFlood(deps.Log(), Name, "user names") },
	})
	device = count(Name+".device", throttle.Options{
		Max: maxUser, Window: t.FailureWindow, MaxBlock: maxUserBlock, Now: deps.Clock(), Wait: wait,
		OnFull: func() { auth.LogFlood(deps.Log(), Name, "device cookies") },
	})
	return addr, user, device
}

// SetThrottling puts new limits in force on a running provider (a reload
// of max_failures, failure_window, attempt_wait or max_user_failures;
// zero values take their defaults): new counters replace the old ones,
// with no count and no block, as every reload leaves them. Limits equal
// to those in force change nothing.
func (p *Provider) SetThrottling(t passwordauth.Throttling, maxUser int) {
	t = t.WithDefaults()
	if maxUser <= 0 {
		maxUser = DefaultMaxUserFailures
	}
	next := limits{t, maxUser}
	if *p.limits.Load() == next {
		return
	}
	addr, user, device := p.counters(t, maxUser, t.Wait(p.cfg.UseBcrypt, p.users.Load().decoyCost))
	p.byAddr.Set(addr)
	p.byUser.Set(user)
	p.byDevice.Set(device)
	p.limits.Store(&next)
	p.log.Info("auth: throttling limits changed on reload", "auth_type", Name, "max_failures", t.MaxFailures,
		"failure_window", t.FailureWindow.String(), "attempt_wait", t.AttemptWait.String(), "max_user_failures", maxUser)
}
