package access

import (
	"net"
	"net/url"
	"slices"
	"strings"
)

// Rules is the effective list of access rules: [proxy] skip_auth_routes
// (anonymous rules, first), [proxy] allow_users (where it applies), the
// [access] rule<N> in ascending order, and the default. The first rule
// that names a request decides; when none does, the default does. A nil
// *Rules has no rules and allows every signed-in user.
type Rules struct {
	// List is the rules in evaluation order.
	List []Rule
	// DefaultDeny refuses a signed-in user whom no rule names ([access]
	// default = deny). False: any signed-in user is allowed.
	DefaultDeny bool
	// PublicHost is [server] public_url's host ("" when unset): served
	// besides the hosts the rules name (see ServedHosts).
	PublicHost string
}

// Who is the person a decision is about.
type Who struct {
	// SignedIn is false for a request that has not signed in (yet): such a
	// request is named by no rule with subjects, and only an anonymous
	// decision lets it through without sign-in.
	SignedIn bool
	// Name is the user name.
	Name string
	// Groups are the user's groups.
	Groups []string
	// GroupsKnown is false when the user's groups cannot be known (a
	// broken groups file): a rule that would need them to decide refuses.
	GroupsKnown bool
	// SecondFactor is true when the sign-in was completed by a second
	// factor.
	SecondFactor bool
}

// Target is the request a decision is about. A zero field is unknown (a
// forward-authentication request from a proxy that did not say it): the
// decision must then hold for every value the field could have.
type Target struct {
	// Method is the request's method; "" when unknown.
	Method string
	// URL holds the request's path (RawPath kept); nil when unknown. The
	// query and fragment never take part.
	URL *url.URL
	// Host is the host name the request was for; "" when unknown.
	Host string
	// Overrides are the methods the request names besides Method, in a
	// method-override header or parameter (see Overrides and
	// WithOverrides): an application that honours one serves the request
	// as that method, so the request is allowed only when every method it
	// names is.
	Overrides []string
	// PathOverride is the path-override header the request carries (one
	// of PathOverrideHeaders, as listed there), "" when none: an
	// application that honours it serves another path than URL's, so no
	// decision on URL holds for it.
	PathOverride string
}

// Decision is what the rules say about one request.
type Decision struct {
	// Policy is the deciding rule's policy, or the default's (Allow or
	// Deny). A refusal that no single rule made (an ambiguous request,
	// unknown groups) is Deny.
	Policy Policy
	// Rule names the deciding rule ("rule3", "allow_users",
	// "skip_auth_routes"), or "default".
	Rule string
	// Reason says why a request is refused, for the log and the refusal
	// counter: one of the Reason constants. Empty when Permits.
	Reason string
}

// Reasons a decision refuses a signed-in user, as logged and counted.
const (
	// ReasonDenied: a deny rule (or default = deny) names the request.
	ReasonDenied = "denied by access rule"
	// ReasonSecondFactor: a second_factor rule names the request and the
	// sign-in used no second factor.
	ReasonSecondFactor = "second factor required"
	// ReasonGroupsUnknown: a rule naming groups had to decide while the
	// user's groups could not be known (a broken groups file).
	ReasonGroupsUnknown = "groups unknown"
	// ReasonAmbiguous: the request can be read several ways (a path that
	// is not canonical, see Canonical; a forwarded request without
	// method, host or path) and the rules do not decide all of them
	// alike, or, before sign-in, one reading of such a path falls to a
	// rule that refuses.
	ReasonAmbiguous = "ambiguous request"
	// ReasonNotAllowed: [proxy] allow_users does not name the user. It is
	// the same reason the proxy has always logged.
	ReasonNotAllowed = "user not in allow_users"
)

// RefusalReasons returns the reasons a refusal by the rules is logged and
// counted under (the reason label of backupweb_auth_refused_total), in a
// stable order. ReasonNotAllowed is not among them: it is logged only.
func RefusalReasons() []string {
	return []string{ReasonDenied, ReasonSecondFactor, ReasonGroupsUnknown, ReasonAmbiguous, ReasonHostNotServed}
}

// DefaultRule is the Decision.Rule of the default.
const DefaultRule = "default"

// Permits reports whether d lets who through: anonymous always; allow a
// signed-in user; second_factor a user signed in with a second factor;
// deny nobody.
func (d Decision) Permits(who Who) bool {
	switch d.Policy {
	case Anonymous:
		return true
	case Allow:
		return who.SignedIn
	case SecondFactor:
		return who.SignedIn && who.SecondFactor
	}
	return false
}

// Empty reports whether rs has no rules and the permissive default, so
// that callers can skip evaluation altogether.
func (rs *Rules) Empty() bool { return rs == nil || len(rs.List) == 0 && !rs.DefaultDeny }

// HasAnonymous reports whether some rule lets requests through without
// sign-in.
func (rs *Rules) HasAnonymous() bool {
	return rs != nil && slices.ContainsFunc(rs.List, func(r Rule) bool { return r.Policy == Anonymous })
}

// restricts reports whether a signed-in user may be refused at all.
func (rs *Rules) restricts() bool {
	return rs != nil && (rs.DefaultDeny || slices.ContainsFunc(rs.List, func(r Rule) bool { return r.Policy != Anonymous }))
}

// pathFree reports whether every rule but the anonymous ones names every
// path (^/ or ^ alone, such as allow_users's rule), so that a decision
// does not depend on the path.
func (rs *Rules) pathFree() bool {
	return !slices.ContainsFunc(rs.List, func(r Rule) bool {
		return r.Policy != Anonymous && !covers(r.Pattern.String(), "^/")
	})
}

// Decide evaluates the rules for who's request t. The path is matched in
// every reading Readings gives: when the readings (and, for an unknown
// method or host, every method or host the rules name, and one they do not
// name) do not all lead to the same answer for who, the request is
// refused as ambiguous. Anonymous rules never name a path that is not in
// canonical form, and for a request that has not signed in, such a path
// is refused as ambiguous as soon as a reading falls to a deny rule (or
// default = deny) as the rules stand before sign-in (rules naming users or
// groups do not apply yet): no one could be let through all its readings
// without a sign-in that a rule names. An unknown path is refused as
// ambiguous when the rules can refuse anyone on some paths only; when the
// rules that can refuse name every path (allow_users, "* ^/ deny
// group:x"), the path does not matter and the decision is made without
// it. The methods of t.Overrides are decided too, and the first of them
// the rules refuse decides the request.
func (rs *Rules) Decide(t Target, who Who) Decision {
	if rs == nil {
		return Decision{Policy: Allow, Rule: DefaultRule}
	}
	var paths []string
	var canonical bool
	switch {
	case t.URL != nil:
		paths, canonical = Readings(t.URL)
	case !rs.restricts():
		return Decision{Policy: Allow, Rule: DefaultRule}
	case rs.pathFree():
		// Every rule that can refuse names every path: any path decides
		// alike (anonymous rules never name an unknown path).
		paths = []string{"/"}
	default:
		return Decision{Policy: Deny, Rule: DefaultRule, Reason: ReasonAmbiguous}
	}
	if len(paths) == 0 {
		return Decision{Policy: Deny, Rule: DefaultRule, Reason: ReasonAmbiguous}
	}
	methods := []string{strings.ToUpper(t.Method)}
	if t.Method == "" {
		methods = rs.namedMethods()
	}
	hosts := []string{NormalHost(t.Host)}
	if t.Host == "" {
		hosts = rs.namedHosts()
	}
	d := rs.decideAll(methods, hosts, paths, canonical, who)
	if !d.Permits(who) {
		return d
	}
	for _, m := range t.Overrides {
		if m = strings.ToUpper(m); slices.Contains(methods, m) {
			continue
		}
		if o := rs.decideAll([]string{m}, hosts, paths, canonical, who); !o.Permits(who) {
			return o
		}
	}
	return d
}

// decideAll decides every combination of the methods, hosts and paths
// given, and returns their common answer, or a refusal as ambiguous when
// they differ (see Decide).
func (rs *Rules) decideAll(methods, hosts, paths []string, canonical bool, who Who) Decision {
	var first Decision
	var firstOK, seen bool
	for _, m := range methods {
		for _, h := range hosts {
			for _, p := range paths {
				d := rs.decideOne(m, h, p, canonical, who)
				ok := d.Permits(who)
				switch {
				case !canonical && !who.SignedIn && d.Policy == Deny:
					return Decision{Policy: Deny, Rule: d.Rule, Reason: ReasonAmbiguous}
				case !seen:
					first, firstOK, seen = d, ok, true
				case ok != firstOK:
					return Decision{Policy: Deny, Rule: first.Rule, Reason: ReasonAmbiguous}
				}
			}
		}
	}
	return first
}

// decideOne is the first-match evaluation of one reading.
func (rs *Rules) decideOne(method, host, p string, canonical bool, who Who) Decision {
	for i := range rs.List {
		r := &rs.List[i]
		if r.Policy == Anonymous && !canonical || !r.names(method, host, p) {
			continue
		}
		if r.hasSubjects() {
			if !who.SignedIn {
				continue
			}
			if r.except {
				if slices.Contains(r.Users, who.Name) {
					continue
				}
				return Decision{Policy: Deny, Rule: r.Name, Reason: ReasonNotAllowed}
			}
			if !slices.Contains(r.Users, who.Name) {
				if len(r.Groups) > 0 && !who.GroupsKnown {
					return Decision{Policy: Deny, Rule: r.Name, Reason: ReasonGroupsUnknown}
				}
				if !slices.ContainsFunc(r.Groups, func(g string) bool { return slices.Contains(who.Groups, g) }) {
					continue
				}
			}
		}
		d := Decision{Policy: r.Policy, Rule: r.Name}
		switch r.Policy {
		case Deny:
			d.Reason = ReasonDenied
		case SecondFactor:
			if !who.SecondFactor {
				d.Reason = ReasonSecondFactor
			}
		}
		return d
	}
	if rs.DefaultDeny {
		return Decision{Policy: Deny, Rule: DefaultRule, Reason: ReasonDenied}
	}
	return Decision{Policy: Allow, Rule: DefaultRule}
}

// names reports whether the rule's methods, hosts and pattern name the
// request (its subjects aside). A rule naming GET names HEAD too.
func (r *Rule) names(method, host, p string) bool {
	if len(r.Methods) > 0 && !slices.Contains(r.Methods, method) && !(method == "HEAD" && slices.Contains(r.Methods, "GET")) {
		return false
	}
	if len(r.Hosts) > 0 && !slices.ContainsFunc(r.Hosts, func(h string) bool { return hostMatches(h, host) }) {
		return false
	}
	return r.Pattern.MatchString(p)
}

// hostMatches reports whether host is pattern, or (pattern ".example.com")
// one of its sub-domains. An empty host matches nothing.
func hostMatches(pattern, host string) bool {
	if host == "" {
		return false
	}
	if strings.HasPrefix(pattern, ".") {
		return strings.HasSuffix(host, pattern) && len(host) > len(pattern)
	}
	return host == pattern
}

// NormalHost returns a Host header's host name as rules compare it: lower
// case, without port and without a final dot.
func NormalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.Trim(h, "[]"), ".")
}

// namedMethods returns every method a rule names, and "" for a method no
// rule names: the methods an unknown method could be, as far as the rules
// can tell.
func (rs *Rules) namedMethods() []string {
	out := []string{""}
	for _, r := range rs.List {
		for _, m := range r.Methods {
			out = appendNew(out, m)
		}
	}
	return out
}

// namedHosts returns a host for every host condition (the host itself, or
// a sub-domain of a ".example.com" pattern), and "" for a host no rule
// names.
func (rs *Rules) namedHosts() []string {
	out := []string{""}
	for _, r := range rs.List {
		for _, h := range r.Hosts {
			if strings.HasPrefix(h, ".") {
				h = "sub" + h
			}
			out = appendNew(out, h)
		}
	}
	return out
}
