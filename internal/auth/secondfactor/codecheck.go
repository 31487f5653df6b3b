package secondfactor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/refusal"
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
// limits as a password (Attempts.Count), and answers its refusals. check
// returns its verdict and whether the code was right. ok is false when it
// answered.
func (s *Step) attempt(w http.ResponseWriter, r *http.Request, user, next string, check func(context.Context) (codeVerdict, bool, error)) (codeVerdict, bool) {
	var v codeVerdict
	ok, err := s.cfg.Attempts.Count(r, user, func(ctx context.Context) (bool, error) {
		var ok bool
		var err error
		v, ok, err = check(ctx)
		return ok, err
	})
	if err != nil {
		s.renderSecondError(w, r, err, user, next)
		return codeVerdict{}, false
	}
	if !ok {
		s.cfg.Audit.Refused(r, s.cfg.Type, v.reason, user)
		answer := refusal.WrongCode
		if v.reason == auth.ReasonCodeUsed {
			answer = refusal.CodeUsed
		}
		s.renderAfterCode(w, r, answer.Reply(), user, next)
		return codeVerdict{}, false
	}
	return v, true
}

// renderAfterCode shows the page the code came from again, with msg.
func (s *Step) renderAfterCode(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string) {
	if r.URL.Path == EnrolPath {
		s.renderEnrolAgain(w, r, rp, user, next)
		return
	}
	s.renderSecond(w, r, rp, user, next)
}

// checkCode checks a code of user: six digits are a TOTP code (right at
// this step or one either side, and that step not used before), anything
// else a recovery code (one of the user's unused ones). Nothing is spent
// here: the verdict's spend does it (see codeVerdict).
func (s *Step) checkCode(ctx context.Context, user, code string) (codeVerdict, bool, error) {
	if len(code) == factors.Digits && strings.Trim(code, "0123456789") == "" {
		secret, err := userstate.TOTPSecret(ctx, s.cfg.State, s.cfg.Keys, user)
		if errors.Is(err, userstate.ErrBroken) {
			s.cfg.Log.ErrorContext(ctx, "auth: a TOTP secret cannot be used", "auth_type", s.cfg.Type, "user", user, "where", s.cfg.Where(), "err", err)
			return codeVerdict{reason: auth.ReasonFactorsBroken}, false, nil
		}
		if err != nil {
			return codeVerdict{}, false, fmt.Errorf("login: reading the TOTP secret: %w", err)
		}
		if secret == "" {
			return codeVerdict{reason: auth.ReasonBadCode}, false, nil
		}
		return s.checkTOTP(ctx, user, secret, code)
	}
	if _, ok := factors.NormalizeRecovery(code); !ok {
		return codeVerdict{reason: auth.ReasonBadCode}, false, nil
	}
	rec, err := s.cfg.State.Factors(ctx, user)
	if errors.Is(err, userstate.ErrBroken) {
		return codeVerdict{reason: auth.ReasonFactorsBroken}, false, nil
	}
	if err != nil {
		return codeVerdict{}, false, fmt.Errorf("login: reading the recovery codes: %w", err)
	}
	if rec == nil || s.cfg.Keys.MatchRecovery(user, code, rec.Recovery) < 0 {
		return codeVerdict{reason: auth.ReasonBadCode}, false, nil
	}
	return codeVerdict{factor: "recovery", spend: func(ctx context.Context) (bool, error) {
		return userstate.UseRecovery(ctx, s.cfg.State, s.cfg.Keys, user, code)
	}}, true, nil
}

// checkTOTP checks user's TOTP code against secret: right at this step or
// one either side, and that step not used before. It answers as checkCode
// does; the verdict's spend marks the step used.
func (s *Step) checkTOTP(ctx context.Context, user, secret, code string) (codeVerdict, bool, error) {
	step, ok := factors.CheckTOTP(secret, code, s.cfg.Now())
	if !ok {
		return codeVerdict{reason: auth.ReasonBadCode}, false, nil
	}
	mark := user + "\x00" + strconv.FormatInt(step, 10)
	used, err := s.cfg.Spent(ctx, spendTOTP, mark)
	if err != nil {
		return codeVerdict{}, false, fmt.Errorf("login: checking the use of a TOTP code: %w", err)
	}
	if used {
		return codeVerdict{reason: auth.ReasonCodeUsed}, false, nil
	}
	return codeVerdict{factor: "totp", spend: func(ctx context.Context) (bool, error) {
		fresh, err := s.cfg.Spend(ctx, spendTOTP, mark, factors.ReplayTTL)
		if err != nil {
			return false, fmt.Errorf("login: recording the use of a TOTP code: %w", err)
		}
		return fresh, nil
	}}, true, nil
}
