package login

import (
	"context"
	"errors"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
)

// SharedUserState is the ability of a shared store ([server] store =
// redis) to keep the users' second factors and machine tokens, so that
// every instance enforces the same ones at the same moment.
// auth.Deps.Shared implements it when it can; then nothing a user owns
// is written to this instance's disk.
type SharedUserState interface {
	// UserStore returns the store, its records MAC'd with keys and its
	// TOTP secrets opened with fkeys.
	UserStore(keys *userstate.RecordKeys, fkeys *factors.Keys, now func() time.Time) userstate.Store
}

// openState sets where the users' state is kept: the shared store's
// when it keeps user state, else the factors file and the tokens file.
func (p *Provider) openState(cfg Config, deps auth.Deps) error {
	if su, ok := deps.Shared.(SharedUserState); ok {
		rk, err := userstate.NewRecordKeys(deps.SecretKey, deps.PreviousSecretKey)
		if err != nil {
			return err
		}
		p.state = su.UserStore(rk, p.fkeys, p.now)
		return nil
	}
	f := factors.Open(cfg.FactorsFile, p.fkeys, p.log)
	p.files = userstate.NewFileStore(f, tokens.Open(cfg.TokensFile, p.log, p.now), func(name string) bool { return p.users.Load().has(name) })
	p.state = p.files
	return nil
}

// stateWhere names where the users' state is kept, for logs: the factors
// file, or "shared store".
func (p *Provider) stateWhere() string {
	if p.files != nil && p.files.FactorsFile() != nil {
		return p.files.FactorsFile().Path()
	}
	return "shared store"
}

// factorsOf returns what the store says about user's factors. A record
// that cannot be used is Broken (logged, with where it is); an error
// means the store could not answer, and the caller answers 503.
func (p *Provider) factorsOf(ctx context.Context, user string) (*factors.Record, factors.Status, error) {
	rec, err := p.state.Factors(ctx, user)
	switch {
	case errors.Is(err, userstate.ErrBroken):
		p.log.ErrorContext(ctx, "auth: a user's second factors cannot be read; they cannot sign in until the record is fixed or their factors are reset", "auth_type", Name, "user", user, "err", err)
		return nil, factors.Broken, nil
	case err != nil:
		p.log.ErrorContext(ctx, "auth: the store of second factors did not answer; the sign-in is refused", "auth_type", Name, "user", user, "err", err)
		return nil, factors.Broken, err
	case rec.HasFactor():
		return rec, factors.Enrolled, nil
	}
	return rec, factors.None, nil
}
