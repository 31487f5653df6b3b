package access

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Policy is what a matching rule decides.
type Policy string

// The policies of [access] rules.
const (
	// Allow lets the signed-in user through.
	Allow Policy = "allow"
	// Deny refuses the signed-in user with 403.
	Deny Policy = "deny"
	// Anonymous lets the request through without sign-in and without
	// identity headers.
	Anonymous Policy = "anonymous"
	// SecondFactor lets through only a user whose sign-in was completed by
	// a second factor; any other signed-in user gets 403.
	SecondFactor Policy = "second_factor"
)

// Rule is one rule of a Policy list: the requests it names (methods, path
// pattern, hosts), whom it names (subjects) and what it decides.
type Rule struct {
	// Name is how messages and the access command name the rule:
	// "rule<N>" for [access] rule<N>, "skip_auth_routes" entries and
	// "allow_users" for the shorthand keys.
	Name string
	// Methods are upper-case method names; empty means every method. A
	// rule naming GET names HEAD too.
	Methods []string
	// Pattern matches the request's path (see Readings).
	Pattern *regexp.Regexp
	// Hosts, when not empty, restrict the rule to requests for these host
	// names: exact, or ".example.com" for its sub-domains. Empty: any host.
	Hosts []string
	// Policy is the rule's decision.
	Policy Policy
	// Users and Groups are the subjects (user:NAME, group:NAME): when
	// either is set, the rule names only a signed-in user who is one of
	// the users or belongs to one of the groups.
	Users, Groups []string
	// Source is the rule as written, for -explain and messages.
	Source string
	// except turns the subjects around: the rule names every signed-in
	// user who is NOT one of Users ([proxy] allow_users, Policy Deny).
	except bool
}

// hasSubjects reports whether the rule names particular users.
func (r *Rule) hasSubjects() bool { return len(r.Users) > 0 || len(r.Groups) > 0 || r.except }

// ParseRule reads the value of [access] rule<N>:
//
//	METHODS PATH-REGEX POLICY [SUBJECT,...]
//
// METHODS is * or a comma list (GET,HEAD); PATH-REGEX a Go RE2 pattern
// that starts with ^; POLICY allow, deny, anonymous or second_factor;
// SUBJECTs user:NAME or group:NAME, separated by commas (spaces after the
// commas are allowed). Subjects are not allowed with anonymous (an
// anonymous request has no user). A pattern that matches every path is
// refused for anonymous unless catchAllAnonymous says the operator means
// it ([proxy] allow_anonymous). Messages quote the rule, which is not a
// secret.
func ParseRule(name, value string, catchAllAnonymous bool) (Rule, error) {
	r := Rule{Name: name, Source: strings.TrimSpace(value)}
	fields := strings.Fields(value)
	if len(fields) < 3 {
		return Rule{}, fmt.Errorf("%s: want METHODS PATH-REGEX POLICY [SUBJECT,...], such as GET ^/admin/ allow group:admins", name)
	}
	if fields[0] != "*" {
		for m := range strings.SplitSeq(fields[0], ",") {
			m = strings.ToUpper(strings.TrimSpace(m))
			if !validMethod(m) {
				return Rule{}, fmt.Errorf("%s: %q is not a method name (write *, GET, or several as GET,HEAD)", name, m)
			}
			if !slices.Contains(r.Methods, m) {
				r.Methods = append(r.Methods, m)
			}
		}
	}
	pat := fields[1]
	re, err := regexp.Compile(pat)
	if err != nil {
		return Rule{}, fmt.Errorf("%s: the path pattern %q is not a regular expression: %v", name, pat, err)
	}
	if !startsAnchored(pat) {
		return Rule{}, fmt.Errorf("%s: the path pattern %q must start with ^ (it would otherwise match anywhere in a path)", name, pat)
	}
	r.Pattern = re
	r.Policy = Policy(strings.ToLower(fields[2]))
	switch r.Policy {
	case Allow, Deny, Anonymous, SecondFactor:
	default:
		return Rule{}, fmt.Errorf("%s: %q is not a policy (write allow, deny, anonymous or second_factor)", name, fields[2])
	}
	for s := range strings.SplitSeq(strings.Join(fields[3:], ","), ",") {
		if s == "" {
			continue
		}
		kind, who, ok := strings.Cut(s, ":")
		switch {
		case !ok || who == "":
			return Rule{}, fmt.Errorf("%s: %q is not a subject (write user:NAME or group:NAME)", name, s)
		case kind == "user":
			r.Users = appendNew(r.Users, who)
		case kind == "group":
			r.Groups = appendNew(r.Groups, who)
		default:
			return Rule{}, fmt.Errorf("%s: %q is not a subject (write user:NAME or group:NAME)", name, s)
		}
	}
	if r.Policy == Anonymous && r.hasSubjects() {
		return Rule{}, fmt.Errorf("%s: an anonymous rule names no users or groups: an anonymous request has no user", name)
	}
	if r.Policy == Anonymous && !catchAllAnonymous && matchesAll(re) {
		return Rule{}, fmt.Errorf("%s: %v: it would let everyone in without signing in; name the public paths only, such as GET ^/status$ anonymous (or set [proxy] allow_anonymous = true if that is what you mean)", name, ErrCatchAll)
	}
	return r, nil
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// FromRoute turns an entry of [proxy] skip_auth_routes into the anonymous
// rule it is shorthand for.
func FromRoute(name string, rt Route) Rule {
	return Rule{Name: name, Methods: rt.Methods, Pattern: rt.Pattern, Policy: Anonymous, Source: rt.Source}
}

// OnlyUsers returns the rule [proxy] allow_users is shorthand for: every
// signed-in user who is not one of users is refused, on every path.
func OnlyUsers(users []string) Rule {
	return Rule{Name: "allow_users", Pattern: regexp.MustCompile(`^/`), Policy: Deny, Users: users, except: true,
		Source: "* ^/ deny (every signed-in user but " + strings.Join(users, ", ") + ")"}
}

// SetHosts sets the rule's host condition from a comma list of host names
// (exact, or .example.com for its sub-domains): [access] rule<N>.hosts.
func (r *Rule) SetHosts(list []string) error {
	for _, h := range list {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || h == "." || strings.ContainsAny(strings.TrimPrefix(h, "."), "/:@ *") {
			return fmt.Errorf("%s.hosts: %q is not a host name (write backups.example.com, or .example.com for its sub-domains)", r.Name, h)
		}
		r.Hosts = appendNew(r.Hosts, strings.TrimSuffix(h, "."))
	}
	return nil
}

// String writes the rule in the rule language, with its host condition.
func (r Rule) String() string {
	if r.except {
		return r.Source
	}
	var b strings.Builder
	if len(r.Methods) == 0 {
		b.WriteString("*")
	} else {
		b.WriteString(strings.Join(r.Methods, ","))
	}
	b.WriteString(" " + r.Pattern.String() + " " + string(r.Policy))
	var subj []string
	for _, u := range r.Users {
		subj = append(subj, "user:"+u)
	}
	for _, g := range r.Groups {
		subj = append(subj, "group:"+g)
	}
	if len(subj) > 0 {
		b.WriteString(" " + strings.Join(subj, ","))
	}
	if len(r.Hosts) > 0 {
		b.WriteString(" (hosts " + strings.Join(r.Hosts, ",") + ")")
	}
	return b.String()
}
