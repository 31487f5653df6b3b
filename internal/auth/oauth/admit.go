package oauth

import (
	"errors"
	"slices"
	"strings"
)

// AllDomains is the authorized_domains value that admits every account the
// identity provider vouches for.
const AllDomains = "*"

// Errors of Rule.Admit and ParseEmail. Callers branch on them with
// errors.Is; their text is fit for logs.
var (
	// ErrBadEmail means the address is not one ParseEmail accepts.
	ErrBadEmail = errors.New("oauth: malformed e-mail address")
	// ErrNotAdmitted means the address is well formed but no list of the
	// rule admits the account.
	ErrNotAdmitted = errors.New("oauth: e-mail address not admitted")
)

// Rule is the contract's authorization rule: which accounts may sign in.
// The zero Rule admits nobody.
//
// An account is admitted when All is set or when any list that is set
// admits it: its address is listed in Users, the domain of its address is
// listed in Domains, or one of the groups the identity provider returned
// for it is listed in Orgs, Teams or Groups. Every account needs a
// well-formed address (ParseEmail) whichever list admits it.
//
// Addresses, domains, GitHub organisations and teams are compared ignoring
// ASCII case only (GitHub treats logins and team slugs so), so no Unicode
// folding can make two different names compare equal; GitLab group paths
// and values of an OpenID Connect groups claim are compared exactly. The
// domain of an address is the whole part after its only "@":
// "example.com" does not admit "user@evil-example.com",
// "user@example.com.evil.org" or "user@sub.example.com" (list sub-domains
// one by one).
//
// Groups admit only when the identity provider returned them for the
// account: the rule never lends its own lists to an account (the mistake
// of oauth2-proxy's CVE-2021-21411).
type Rule struct {
	// All admits every well-formed address (authorized_domains = *).
	All bool
	// Domains are the admitted e-mail domains, without "@".
	Domains []string
	// Users are the admitted e-mail addresses.
	Users []string
	// Orgs are the admitted GitHub organisations (authorized_orgs), by
	// login.
	Orgs []string
	// Teams are the admitted GitHub teams (authorized_teams), each
	// "org/team-slug".
	Teams []string
	// Groups are the admitted GitLab group full paths, or values of an
	// OpenID Connect groups claim (authorized_groups).
	Groups []string
	// HostedDomain makes a domain of Domains admit an address only when
	// the account is also hosted by a listed domain (Account.HostedDomain,
	// Google's hd claim): a Google Workspace account of that domain, not
	// a personal Google account that merely uses an address there. Set
	// for provider google by Resolve and New.
	HostedDomain bool
}

// Account is what a rule decides on: the verified e-mail address, and the
// facts the identity provider returned with it.
type Account struct {
	// Email is the verified e-mail address.
	Email string
	// HostedDomain is the domain that hosts the account (Google's hd
	// claim): empty for a personal account or another provider.
	HostedDomain string
	// Groups are the groups the identity provider returned: GitHub
	// organisation logins and "org/team" slugs, GitLab group full paths,
	// or the groups claim's values.
	Groups []string
}

// Empty reports whether the rule admits nobody: no list and not All.
func (r Rule) Empty() bool {
	return !r.All && len(r.Domains) == 0 && len(r.Users) == 0 &&
		len(r.Orgs) == 0 && len(r.Teams) == 0 && len(r.Groups) == 0
}

// ByGroup reports whether the rule has a list of groups (organisations,
// teams or groups).
func (r Rule) ByGroup() bool { return len(r.Orgs)+len(r.Teams)+len(r.Groups) > 0 }

// Admit returns nil when email may sign in by itself (All, Users or
// Domains), ErrBadEmail when it is not a well-formed address, and
// ErrNotAdmitted otherwise. It is AdmitAccount of an account without
// groups or hosted domain.
func (r Rule) Admit(email string) error { return r.AdmitAccount(Account{Email: email}) }

// AdmitAccount returns nil when a may sign in, ErrBadEmail when its
// address is not well formed, and ErrNotAdmitted otherwise.
func (r Rule) AdmitAccount(a Account) error {
	_, domain, err := ParseEmail(a.Email)
	if err != nil {
		return err
	}
	if r.All || r.admitsUser(a.Email) || r.admitsDomain(domain, a.HostedDomain) || r.admitsGroups(a.Groups) {
		return nil
	}
	return ErrNotAdmitted
}

func (r Rule) admitsUser(email string) bool {
	return slices.ContainsFunc(r.Users, func(u string) bool { return asciiEqualFold(u, email) })
}

func (r Rule) admitsDomain(domain, hosted string) bool {
	listed := func(d string) bool {
		return d != "" && slices.ContainsFunc(r.Domains, func(l string) bool { return asciiEqualFold(l, d) })
	}
	if !listed(domain) {
		return false
	}
	if !r.HostedDomain || listed(hosted) {
		return true
	}
	// Google's own consumer domains host no Workspace: every account
	// with such an address is one of Google's personal accounts, so the
	// listed domain itself is the whole answer (and such accounts never
	// carry hd).
	return hosted == "" && slices.Contains(consumerDomains, strings.ToLower(domain))
}

// consumerDomains are the domains of Google's personal accounts, which no
// Workspace can host: listed in authorized_domains with provider google,
// they admit their accounts without an hd claim.
var consumerDomains = []string{"gmail.com", "googlemail.com"}

// admitsGroups reports whether one of the account's groups is listed. An
// organisation never matches a team ("acme" is not "acme/ops") since an
// organisation login holds no "/".
func (r Rule) admitsGroups(groups []string) bool {
	for _, g := range groups {
		if strings.Contains(g, "/") {
			if slices.ContainsFunc(r.Teams, func(t string) bool { return asciiEqualFold(t, g) }) {
				return true
			}
		} else if slices.ContainsFunc(r.Orgs, func(o string) bool { return asciiEqualFold(o, g) }) {
			return true
		}
		if slices.Contains(r.Groups, g) {
			return true
		}
	}
	return false
}
