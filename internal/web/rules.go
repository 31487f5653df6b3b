package web

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
)

// GroupSource tells the groups of a user of types basic and flask-login
// ([authentication] groups_file; groupfile.File). known is false when they
// cannot be known (a broken file): rules that need them then refuse.
type GroupSource interface {
	GroupsOf(name string) (groups []string, known bool)
}

// guard applies the access rules ([access], with [proxy] skip_auth_routes
// and allow_users folded in) and fills in the groups of users whose type
// takes them from the groups file. A nil *guard, or one without rules or
// groups, leaves requests as RequireAuth leaves them.
type guard struct {
	rules  *access.Rules
	groups GroupSource
	errs   *refusal.Errors
	log    *slog.Logger
	audit  auth.Audit // refusals logged and counted
}

// idle reports whether g has nothing to do.
func (g *guard) idle() bool { return g == nil || g.rules.Empty() && g.groups == nil }

// who returns u with its groups filled in from the groups file (when
// there is one), and the rules' view of u.
func (g *guard) who(u auth.User) (auth.User, access.Who) {
	known := true
	if g.groups != nil {
		var gs []string
		gs, known = g.groups.GroupsOf(u.Name)
		u.Groups = gs
	}
	return u, access.Who{SignedIn: true, Name: u.Name, Groups: u.Groups, GroupsKnown: known, SecondFactor: u.SecondFactor != ""}
}

// anonymous reports whether the rules let t through without sign-in.
func (g *guard) anonymous(t access.Target) bool {
	return !g.idle() && g.rules.HasAnonymous() && g.rules.Decide(t, access.Who{}).Policy == access.Anonymous
}

// protect returns next behind the rules: a request an anonymous rule
// names goes to next at once, without a user (and so without identity
// headers upstream); every other request passes protect (RequireAuth),
// then the rules decide for the signed-in user, whom they refuse with 403
// (the styled page, or JSON by the refusal rule; never a redirect to the
// sign-in page, which would only sign the same user in again).
func (g *guard) protect(protect func(http.Handler) http.Handler, next http.Handler) http.Handler {
	if g.idle() {
		return protect(next)
	}
	signed := protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := auth.FromContext(r.Context())
		u, ok := g.admit(w, r, u, targetOf(r))
		if !ok {
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), u)))
	}))
	if !g.rules.HasAnonymous() {
		return signed
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.anonymous(targetOf(r)) {
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r)
			return
		}
		signed.ServeHTTP(w, r)
	})
}

// admit fills in u's groups and applies the rules to u's request t. When
// they refuse, it answers 403, logs the refusal (and counts it, but for
// allow_users, which has always been logged only) and reports false.
func (g *guard) admit(w http.ResponseWriter, r *http.Request, u auth.User, t access.Target) (auth.User, bool) {
	if g.idle() {
		return u, true
	}
	u, who := g.who(u)
	d := g.rules.Decide(t, who)
	if d.Permits(who) {
		return u, true
	}
	answer := refusal.RuleDenied
	switch d.Reason {
	case access.ReasonNotAllowed:
		logNotAllowed(g.log, r, u)
		g.errs.Refuse(w, r, refusal.NotAllowed)
		return u, false
	case access.ReasonSecondFactor:
		answer = refusal.SecondFactorRequired
	case access.ReasonAmbiguous:
		answer = refusal.AmbiguousPath
	}
	g.audit.RefusedDetail(r, u.Type, d.Reason, d.Rule, u.Name)
	g.errs.Refuse(w, r, answer)
	return u, false
}

// targetOf is the request as every decision sees it: its one reading
// (access.Read), made once by front, or the request a forward-
// authentication question carries (access.WithTarget).
func targetOf(r *http.Request) access.Target {
	return access.TargetOf(r)
}

// unreadable answers a request that has not signed in when its path is
// not canonical and a reading of it falls to a rule that refuses (see
// access.Rules.Decide): with answer (400, or 403 for nginx) and a
// refusal line, rather than a sign-in that could not make every reading
// pass. It reports whether it answered.
func (g *guard) unreadable(w http.ResponseWriter, r *http.Request, t access.Target, authType string, answer refusal.Refusal) bool {
	if g.idle() || t.URL == nil {
		return false
	}
	if _, canonical := access.Canonical(t.URL); canonical {
		return false
	}
	d := g.rules.Decide(t, access.Who{})
	if d.Reason != access.ReasonAmbiguous {
		return false
	}
	g.audit.RefusedDetail(r, authType, d.Reason, d.Rule, "")
	g.errs.Refuse(w, r, answer)
	return true
}

// challenger returns p, whose Challenge answers an ambiguous path with
// 400 first (see unreadable).
func (g *guard) challenger(p auth.Provider) auth.Provider {
	if g.idle() {
		return p
	}
	return ambiguityFirst{Provider: p, g: g}
}

// ambiguityFirst is a provider whose challenge refuses an ambiguous path
// before it asks for a sign-in.
type ambiguityFirst struct {
	auth.Provider
	g *guard
}

func (a ambiguityFirst) Challenge(w http.ResponseWriter, r *http.Request) {
	if !a.g.unreadable(w, r, targetOf(r), a.Type(), refusal.AmbiguousAddress) {
		a.Provider.Challenge(w, r)
	}
}

// groupsValue is the groups header's value: the groups sorted and
// comma-separated, "" for none.
func groupsValue(groups []string) string {
	if len(groups) == 0 {
		return ""
	}
	if !slices.IsSorted(groups) {
		groups = slices.Sorted(slices.Values(groups))
	}
	return strings.Join(groups, ",")
}

// logNotAllowed writes the refusal line of a signed-in user that [proxy]
// allow_users does not name: the same line as auth.Audit's refusals
// (warning, "auth refused", the type, the reason, the client address, the
// user), but not counted among refused sign-in attempts, since the user
// did prove who they are. A nil log writes nothing.
func logNotAllowed(log *slog.Logger, r *http.Request, u auth.User) {
	if log == nil {
		return
	}
	log.LogAttrs(r.Context(), slog.LevelWarn, "auth refused",
		slog.String("auth_type", u.Type), slog.String("reason", access.ReasonNotAllowed),
		slog.String("client", peer.Of(r).String()), slog.String("user", u.Name))
}
