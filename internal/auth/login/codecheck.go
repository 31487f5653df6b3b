package login

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
	"github.com/backupweb/backupweb/internal/userstate"
)

// codeVerdict is what a check of a code found: the factor it is, whether
// it is right, the refusal's reason when not, and spend, which spends the
// code (a TOTP step, a recovery code) and reports whether it was still
// unspent. A right code is spent only once the pending state is (see
// complete), so that a pending state completed by one step spends no
// other step's code.
type codeVerdict struct {
	factor, reason string
	spend          func(ctx context.Context) (bool, error)
}

// attempt counts one second-factor attempt of user against the same
// limits as a password (acquire, check, settle), and answers its
// refusals. check returns its verdict and whether the code was right. ok
// is false when it answered.
func (p *Provider) attempt(w http.ResponseWriter, r *http.Request, user, next string, check func(context.Context) (codeVerdict, bool, error)) (codeVerdict, bool) {
	v, ok, err := countAttempt(p, r, p.limitsFor(r, user), user, check)
	if err != nil {
		p.renderSecondError(w, r, err, user, next)
		return codeVerdict{}, false
	}
	if !ok {
		p.audit.Refused(r, Name, v.reason, user)
		answer := refusal.WrongCode
		if v.reason == auth.ReasonCodeUsed {
			answer = refusal.CodeUsed
		}
		p.renderAfterCode(w, r, answer.Reply(), user, next)
		return codeVerdict{}, false
	}
	return v, true
}

// renderAfterCode shows the page the code came from again, with msg.
func (p *Provider) renderAfterCode(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string) {
	if r.URL.Path == EnrolPath {
		p.renderEnrolAgain(w, r, rp, user, next)
		return
	}
	p.renderSecond(w, r, rp, user, next)
}

// addrLimit returns the client address's limit (an IPv6 client counts
// per /64).
func (p *Provider) addrLimit(r *http.Request) limit {
	return limit{p.byAddr, throttle.AddrKey(peer.Of(r).Addr), peer.Of(r).String()}
}

// limitsFor returns the limits an attempt of the user name counts
// against, a password's or a second factor's: the client address's, and
// the name's or, for a browser with a device cookie for that name, the
// device's. Logs name the user as logName bounds it.
func (p *Provider) limitsFor(r *http.Request, name string) []limit {
	name = p.throttleName(name)
	limits := []limit{p.addrLimit(r)}
	if dev, ok := p.device(r, name); ok {
		return append(limits, limit{p.byDevice, dev, "device of user " + logName(name)})
	}
	return append(limits, limit{p.byUser, name, "user " + logName(name)})
}

// checkCode checks a code of user: six digits are a TOTP code (right at
// this step or one either side, and that step not used before), anything
// else a recovery code (one of the user's unused ones). Nothing is spent
// here: the verdict's spend does it (see codeVerdict).
func (p *Provider) checkCode(ctx context.Context, user, code string) (codeVerdict, bool, error) {
	if len(code) == factors.Digits && strings.Trim(code, "0123456789") == "" {
		secret, err := userstate.TOTPSecret(ctx, p.state, p.fkeys, user)
		if errors.Is(err, userstate.ErrBroken) {
			p.log.ErrorContext(ctx, "auth: a TOTP secret cannot be used", "auth_type", Name, "user", user, "where", p.stateWhere(), "err", err)
			return codeVerdict{reason: auth.ReasonFactorsBroken}, false, nil
		}
		if err != nil {
			return codeVerdict{}, false, fmt.Errorf("login: reading the TOTP secret: %w", err)
		}
		if secret == "" {
			return codeVerdict{reason: auth.ReasonBadCode}, false, nil
		}
		return p.checkTOTP(ctx, user, secret, code)
	}
	if _, ok := factors.NormalizeRecovery(code); !ok {
		return codeVerdict{reason: auth.ReasonBadCode}, false, nil
	}
	rec, err := p.state.Factors(ctx, user)
	if errors.Is(err, userstate.ErrBroken) {
		return codeVerdict{reason: auth.ReasonFactorsBroken}, false, nil
	}
	if err != nil {
		return codeVerdict{}, false, fmt.Errorf("login: reading the recovery codes: %w", err)
	}
	if rec == nil || p.fkeys.MatchRecovery(user, code, rec.Recovery) < 0 {
		return codeVerdict{reason: auth.ReasonBadCode}, false, nil
	}
	return codeVerdict{factor: "recovery", spend: func(ctx context.Context) (bool, error) {
		return userstate.UseRecovery(ctx, p.state, p.fkeys, user, code)
	}}, true, nil
}

// checkTOTP checks user's TOTP code against secret: right at this step or
// one either side, and that step not used before. It answers as checkCode
// does; the verdict's spend marks the step used.
func (p *Provider) checkTOTP(ctx context.Context, user, secret, code string) (codeVerdict, bool, error) {
	step, ok := factors.CheckTOTP(secret, code, p.now())
	if !ok {
		return codeVerdict{reason: auth.ReasonBadCode}, false, nil
	}
	mark := user + "\x00" + strconv.FormatInt(step, 10)
	used, err := p.spent(ctx, spendTOTP, mark)
	if err != nil {
		return codeVerdict{}, false, fmt.Errorf("login: checking the use of a TOTP code: %w", err)
	}
	if used {
		return codeVerdict{reason: auth.ReasonCodeUsed}, false, nil
	}
	return codeVerdict{factor: "totp", spend: func(ctx context.Context) (bool, error) {
		fresh, err := p.spend(ctx, spendTOTP, mark, factors.ReplayTTL)
		if err != nil {
			return false, fmt.Errorf("login: recording the use of a TOTP code: %w", err)
		}
		return fresh, nil
	}}, true, nil
}
