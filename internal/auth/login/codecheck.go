package login

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
)

// attempt counts one second-factor attempt of user against the same
// limits as a password (acquire, check, settle), and answers its
// refusals. check returns the factor used, whether the code was right,
// and the refusal's reason when not. ok is false when it answered.
func (p *Provider) attempt(w http.ResponseWriter, r *http.Request, user, next string, check func(context.Context) (factor string, ok bool, reason string, err error)) (string, bool) {
	type verdict struct{ factor, reason string }
	v, ok, err := countAttempt(p, r, p.limitsFor(r, user), user, func(ctx context.Context) (verdict, bool, error) {
		factor, ok, reason, err := check(ctx)
		return verdict{factor, reason}, ok, err
	})
	if err != nil {
		p.renderSecondError(w, r, err, user, next)
		return "", false
	}
	if !ok {
		p.audit.Refused(r, Name, v.reason, user)
		answer := refusal.WrongCode
		if v.reason == auth.ReasonCodeUsed {
			answer = refusal.CodeUsed
		}
		p.renderAfterCode(w, r, answer.Reply(), user, next)
		return "", false
	}
	return v.factor, true
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
	limits := []limit{p.addrLimit(r)}
	if dev, ok := p.device(r, name); ok {
		return append(limits, limit{p.byDevice, dev, "device of user " + logName(name)})
	}
	return append(limits, limit{p.byUser, name, "user " + logName(name)})
}

// checkCode checks a code of user: six digits are a TOTP code (right at
// this step or one either side, and that step not used before: the step
// is spent on success), anything else a recovery code (spent in the
// factors file on success). It returns the factor used, whether the code
// was right, and the refusal's reason when not.
func (p *Provider) checkCode(ctx context.Context, user, code string) (factor string, ok bool, reason string, err error) {
	if len(code) == factors.Digits && strings.Trim(code, "0123456789") == "" {
		secret, err := p.factors.TOTPSecret(user)
		if err != nil {
			p.log.ErrorContext(ctx, "auth: a TOTP secret cannot be used", "auth_type", Name, "user", user, "file", p.factors.Path(), "err", err)
			return "", false, auth.ReasonFactorsBroken, nil
		}
		if secret == "" {
			return "", false, auth.ReasonBadCode, nil
		}
		return p.checkTOTP(ctx, user, secret, code)
	}
	if _, ok := factors.NormalizeRecovery(code); !ok {
		return "", false, auth.ReasonBadCode, nil
	}
	used, err := p.factors.UseRecovery(user, code)
	if err != nil {
		return "", false, "", err
	}
	if !used {
		return "", false, auth.ReasonBadCode, nil
	}
	return "recovery", true, "", nil
}

// checkTOTP checks user's TOTP code against secret: right at this step or
// one either side, and that step not used before (it is spent on
// success). It answers as checkCode does.
func (p *Provider) checkTOTP(ctx context.Context, user, secret, code string) (factor string, ok bool, reason string, err error) {
	step, ok := factors.CheckTOTP(secret, code, p.now())
	if !ok {
		return "", false, auth.ReasonBadCode, nil
	}
	fresh, err := p.spend(ctx, spendTOTP, user+"\x00"+strconv.FormatInt(step, 10), factors.ReplayTTL)
	if err != nil {
		return "", false, "", fmt.Errorf("login: recording the use of a TOTP code: %w", err)
	}
	if !fresh {
		return "", false, auth.ReasonCodeUsed, nil
	}
	return "totp", true, "", nil
}
