package secondfactor

import (
	"context"
	"errors"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/userstate"
)

// factorsOf returns what the store says about user's factors. A record
// that cannot be used is Broken (logged, with where it is); an error
// means the store could not answer, and the caller answers 503.
func (s *Step) factorsOf(ctx context.Context, user string) (*factors.Record, factors.Status, error) {
	rec, err := s.cfg.State.Factors(ctx, user)
	switch {
	case errors.Is(err, userstate.ErrBroken):
		s.cfg.Log.ErrorContext(ctx, "auth: a user's second factors cannot be read; they cannot sign in until the record is fixed or their factors are reset", "auth_type", s.cfg.Type, "user", user, "err", err)
		return nil, factors.Broken, nil
	case err != nil:
		s.cfg.Log.ErrorContext(ctx, "auth: the store of second factors did not answer; the sign-in is refused", "auth_type", s.cfg.Type, "user", user, "err", err)
		return nil, factors.Broken, err
	case rec.HasFactor():
		return rec, factors.Enrolled, nil
	}
	return rec, factors.None, nil
}
