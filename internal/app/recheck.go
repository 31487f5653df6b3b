package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/web"
)

// ruleCheck is the proxy's auth.Rechecker: a request still being answered
// (a WebSocket, a long poll) stays open while the provider's check of its
// sign-in holds (when the provider has one) and the access rules in force
// (those of the last reload, with the groups file as it is now) still let
// its user through. A reload, or an edit of the groups file, that makes
// the rules refuse the user closes it.
type ruleCheck struct {
	rc  auth.Rechecker // the provider's; nil for types whose sign-in cannot end
	log *slog.Logger
	now atomic.Pointer[ruleSet]
}

// ruleSet is the access rules in force and the groups they read.
type ruleSet struct {
	rules  *access.Rules
	groups web.GroupSource
}

// set puts rules and groups in force.
func (c *ruleCheck) set(rules *access.Rules, groups web.GroupSource) {
	c.now.Store(&ruleSet{rules: rules, groups: groups})
}

// Recheck returns the check of r, admitted as u: never nil, so that every
// signed-in request the proxy answers long enough is checked.
func (c *ruleCheck) Recheck(r *http.Request, u auth.User) func(ctx context.Context) (bool, error) {
	var signedIn func(ctx context.Context) (bool, error)
	if c.rc != nil {
		signedIn = c.rc.Recheck(r, u)
	}
	return func(ctx context.Context) (bool, error) {
		if signedIn != nil {
			if ok, err := signedIn(ctx); !ok || err != nil {
				return ok, err
			}
		}
		rs := c.now.Load()
		ok, d := web.StillAdmitted(rs.rules, rs.groups, r, u)
		if !ok {
			c.log.Info("proxy: the access rules now refuse the user of an open connection; it is closed",
				"auth_type", u.Type, "user", u.Name, "method", r.Method, "path", r.URL.Path, "rule", d.Rule, "reason", d.Reason)
		}
		return ok, nil
	}
}
