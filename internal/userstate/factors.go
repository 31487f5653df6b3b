package userstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/backupweb/backupweb/internal/factors"
)

// TOTPSecret returns user's TOTP secret (base32), opened with keys, or ""
// when they have none. A record that cannot be read, or a secret that
// does not open, is an error wrapping ErrBroken.
func TOTPSecret(ctx context.Context, s Store, keys *factors.Keys, user string) (string, error) {
	rec, err := s.Factors(ctx, user)
	if err != nil || rec == nil || rec.TOTP == nil {
		return "", err
	}
	secret, err := keys.OpenTOTP(user, rec.TOTP.Sealed)
	if err != nil {
		return "", &BrokenError{User: user, Where: "TOTP secret", Err: err}
	}
	return secret, nil
}

// UseRecovery spends one of user's recovery codes in one atomic step of
// the store: it reports whether code was one of them and, when it was,
// removes it, so that of two uses of one code at the same time exactly
// one succeeds.
func UseRecovery(ctx context.Context, s Store, keys *factors.Keys, user, code string) (bool, error) {
	used := false
	err := s.EditFactors(ctx, user, func(rec *factors.Record) error {
		used = false // fn runs again when the edit lost a race
		i := keys.MatchRecovery(user, code, rec.Recovery)
		if i < 0 {
			return ErrUnchanged
		}
		rec.Recovery = append(rec.Recovery[:i], rec.Recovery[i+1:]...)
		used = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("userstate: spending a recovery code of %s: %w", user, err)
	}
	return used, nil
}

// editResult turns the error of an edit's fn into the edit's result:
// ErrUnchanged is success without a write.
func editResult(err error) (write bool, _ error) {
	if errors.Is(err, ErrUnchanged) {
		return false, nil
	}
	return err == nil, err
}
