package basic

import "github.com/backupweb/backupweb/internal/auth/passwordauth"

// SetThrottling puts new limits in force on a running provider (a reload
// of max_failures, failure_window or attempt_wait; zero values take their
// defaults): a new counter replaces the old one, with no count and no
// block, as every reload leaves it. Limits equal to those in force change
// nothing.
func (p *Provider) SetThrottling(t passwordauth.Throttling) {
	t = t.WithDefaults()
	if *p.limits.Load() == t {
		return
	}
	p.limiter.Set(p.counter(t))
	p.limits.Store(&t)
	p.log.Info("auth: throttling limits changed on reload", "auth_type", Name, "max_failures", t.MaxFailures,
		"failure_window", t.FailureWindow.String(), "attempt_wait", t.AttemptWait.String())
}
