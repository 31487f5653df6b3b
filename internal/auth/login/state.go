package login

import (
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
		p.wrapState(cfg)
		return nil
	}
	f := factors.Open(cfg.FactorsFile, p.fkeys, p.log)
	p.files = userstate.NewFileStore(f, tokens.Open(cfg.TokensFile, p.log, p.now), func(name string) bool { return p.users.Load().has(name) })
	p.state = p.files
	p.wrapState(cfg)
	return nil
}

// wrapState wraps the state store with cfg.wrapState, when set.
func (p *Provider) wrapState(cfg Config) {
	if cfg.wrapState != nil {
		p.state = cfg.wrapState(p.state)
	}
}

// stateWhere names where the users' state is kept, for logs: the factors
// file, or "shared store".
func (p *Provider) stateWhere() string {
	if p.files != nil && p.files.FactorsFile() != nil {
		return p.files.FactorsFile().Path()
	}
	return "shared store"
}
