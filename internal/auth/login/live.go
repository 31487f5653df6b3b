package login

import (
	"errors"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
)

// ErrSecondFactorRestart is SetSecondFactor's answer to a change from or
// to off: the factors file, its routes and the passkeys are set up when
// the provider is made, so only a restart can turn them on or off.
var ErrSecondFactorRestart = errors.New("login: second_factor can change between optional and required only; from or to off needs a restart")

// secondFactor returns the second_factor in force.
func (p *Provider) secondFactor() SecondFactor { return SecondFactor(p.sf.Load()) }

// SecondFactor returns the second_factor in force.
func (p *Provider) SecondFactor() SecondFactor { return p.secondFactor() }

// SetSecondFactor switches a running provider between optional and
// required (a reload of the configuration). From required, every session
// made without a second factor is refused at its next request and ended,
// and the log says that a second factor is now required. A change from or
// to off returns ErrSecondFactorRestart and changes nothing.
func (p *Provider) SetSecondFactor(v SecondFactor) error {
	cur := p.secondFactor()
	if v == cur {
		return nil
	}
	if p.fkeys == nil || cur == SecondFactorOff || v == SecondFactorOff {
		return ErrSecondFactorRestart
	}
	p.sf.Store(int32(v))
	p.log.Info("auth: second_factor changed on reload", "auth_type", Name, "from", cur.String(), "to", v.String())
	return nil
}

// refusal names why a session is no longer admitted (sessionauth's
// Options.Refusal): a session made with the password alone when a second
// factor is required, otherwise its user was removed or their password
// changed.
func (p *Provider) refusal(d session.Data) string {
	if p.fkeys != nil && p.secondFactor() == SecondFactorRequired && d.Attrs[AttrSecondFactor] == "" && p.users.Load().admits(d.Username, d.Cred) {
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
