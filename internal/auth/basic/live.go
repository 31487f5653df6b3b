package basic

import (
	"fmt"

	"github.com/backupweb/backupweb/internal/auth/passwordauth"
)

// SetThrottling puts new limits in force on a running provider (a reload
// of max_failures, failure_window, attempt_wait or max_user_failures; zero
// values take their defaults): new counters replace the old ones, with no
// count and no block, as every reload leaves them. Limits equal to those
// in force change nothing.
func (p *Provider) SetThrottling(t passwordauth.Throttling, maxUser int) {
	t = t.WithDefaults()
	if maxUser <= 0 {
		maxUser = DefaultMaxUserFailures
	}
	next := limits{t, maxUser}
	if *p.limits.Load() == next {
		return
	}
	addr, user, known := p.counters(next)
	p.limiter.Set(addr)
	p.byUser.Set(user)
	p.byKnown.Set(known)
	p.limits.Store(&next)
	p.log.Info("auth: throttling limits changed on reload", "auth_type", Name, "max_failures", t.MaxFailures,
		"failure_window", t.FailureWindow.String(), "attempt_wait", t.AttemptWait.String(), "max_user_failures", maxUser)
}

// SetCredentials puts a new user name, password and use_bcrypt in force
// on a running provider (a reload that rotates a leaked password): from
// the moment it returns, the old credential is refused and the new one
// admitted, the verification cache is emptied, and addresses known for
// the old credential are known no more. A value Validate refuses changes
// nothing and is returned as the error. Equal values change nothing.
func (p *Provider) SetCredentials(username, pw string, useBcrypt bool) error {
	cfg := p.cfg
	cfg.Username, cfg.Password, cfg.UseBcrypt = username, pw, useBcrypt
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("basic: %w", err)
	}
	old := p.cred.Load()
	if old.username == username && old.password == pw && old.useBcrypt == useBcrypt {
		return nil
	}
	p.cred.Store(p.newCred(cfg))
	p.verifier.Purge()
	p.log.Info("auth: credentials changed on reload: the previous ones are refused from now on, credential cache emptied", "auth_type", Name,
		"username_changed", old.username != username, "password_changed", old.password != pw, "use_bcrypt", useBcrypt)
	return nil
}
