package login

import (
	"errors"

	"github.com/backupweb/backupweb/access"
	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/session"
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
	if p.factors == nil || cur == SecondFactorOff || v == SecondFactorOff {
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
	if p.factors != nil && p.secondFactor() == SecondFactorRequired && d.Attrs[AttrSecondFactor] == "" && p.users.Load().admits(d.Username, d.Cred) {
		return access.ReasonSecondFactor
	}
	return auth.ReasonNotAdmitted
}
