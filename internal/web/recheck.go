package web

import (
	"net/http"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
)

// StillAdmitted decides again a request that is still being answered (a
// proxied WebSocket or long poll) with the access rules and groups in
// force now: u is the user it was admitted as, groups (nil: none) gives
// their groups as the groups file says now. It reports whether the rules
// still let u through, and when not, the decision's reason and rule. A
// reload of the configuration, or an edit of the groups file, can make the
// rules refuse a connection opened before; the program's recheck closes
// it then.
func StillAdmitted(rules *access.Rules, groups GroupSource, r *http.Request, u auth.User) (ok bool, d access.Decision) {
	g := &guard{rules: rules, groups: groups}
	if g.idle() {
		return true, access.Decision{}
	}
	_, who := g.who(u)
	d = rules.Decide(targetOf(r), who)
	return d.Permits(who), d
}
