package oauth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
)

// The admission keys by group (authorized_orgs, authorized_teams,
// authorized_groups) and groups_claim: their syntax, and which provider
// honours which.

// maxGitHubLogin is the longest GitHub organisation login.
const maxGitHubLogin = 39

// checkOrg validates one authorized_orgs entry: a GitHub organisation
// login, letters, digits and single inner hyphens, at most 39 characters.
func checkOrg(o string) error {
	if o == "" || len(o) > maxGitHubLogin || o[0] == '-' || o[len(o)-1] == '-' || strings.Contains(o, "--") ||
		strings.ContainsFunc(o, func(c rune) bool { return !asciiAlnum(c) && c != '-' }) {
		return fmt.Errorf("%q is not a GitHub organisation login (letters, digits and inner hyphens, e.g. acme)", o)
	}
	return nil
}

// checkTeam validates one authorized_teams entry: "org/team-slug", the
// organisation's login and the team's slug as it appears in the team's
// address (github.com/orgs/ORG/teams/SLUG): letters, digits, hyphens and
// underscores.
func checkTeam(t string) error {
	org, slug, ok := strings.Cut(t, "/")
	if !ok || checkOrg(org) != nil || slug == "" ||
		strings.ContainsFunc(slug, func(c rune) bool { return !asciiAlnum(c) && c != '-' && c != '_' }) {
		return fmt.Errorf("%q is not org/team: write the organisation's login, a slash and the team's slug (e.g. acme/backup-operators)", t)
	}
	return nil
}

// checkGroup validates one authorized_groups entry: a value a provider
// could return as a group (see usableGroup).
func checkGroup(g string) error {
	if !usableGroup(g) {
		return fmt.Errorf("%q cannot be a group: empty, longer than %d bytes, or holding a control character", g, maxGroupLen)
	}
	return nil
}

// checkGitLabPath validates an authorized_groups entry for provider
// gitlab: a group's full path, segments of letters, digits, "_", "-" and
// "." joined by "/" (e.g. acme/infra/backups).
func checkGitLabPath(g string) error {
	for seg := range strings.SplitSeq(g, "/") {
		if seg == "" || strings.ContainsFunc(seg, func(c rune) bool { return !asciiAlnum(c) && !strings.ContainsRune("_-.", c) }) {
			return fmt.Errorf("%q is not a GitLab group's full path (e.g. acme/infra/backups, as in the group's address, without a leading or trailing slash)", g)
		}
	}
	return nil
}

// checkClaim validates groups_claim: a claim's name, without white space
// or control characters ("https://example.com/groups" is fine: a claim's
// name is taken whole, never as a path into nested claims).
func checkClaim(c string) error {
	if c == "" || strings.ContainsFunc(c, invisible) {
		return fmt.Errorf("%q is not a claim name", c)
	}
	return nil
}

func asciiAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// parseGroupList keeps the entries of the list of key that check accepts,
// calling bad for each it refuses; fold lowers the ASCII letters of the
// entries kept.
func parseGroupList(list []string, key string, check func(string) error, fold bool, bad func(key string, err error)) []string {
	var out []string
	for _, v := range list {
		if err := check(v); err != nil {
			bad(key, err)
			continue
		}
		if fold {
			v = toLowerASCII(v)
		}
		out = append(out, v)
	}
	return out
}

// ParseClaim checks a groups_claim value that is set: it returns it
// trimmed, or "" and the problem (a *auth.KeyError at groups_claim).
func ParseClaim(v string) (string, []error) {
	v = strings.TrimSpace(v)
	if err := checkClaim(v); err != nil {
		return "", []error{&auth.KeyError{Key: keyClaim, Err: err}}
	}
	return v, nil
}

// checkGroupRule reports the malformed entries of the rule's lists by
// group and of claim, each a *auth.KeyError.
func checkGroupRule(r Rule, claim string) []error {
	var errs []error
	for _, l := range []struct {
		key     string
		entries []string
		check   func(string) error
	}{{keyOrgs, r.Orgs, checkOrg}, {keyTeams, r.Teams, checkTeam}, {keyGroups, r.Groups, checkGroup}} {
		for _, v := range l.entries {
			if err := l.check(v); err != nil {
				errs = append(errs, &auth.KeyError{Key: l.key, Err: err})
			}
		}
	}
	if claim != "" {
		if err := checkClaim(claim); err != nil {
			errs = append(errs, &auth.KeyError{Key: keyClaim, Err: err})
		}
	}
	return errs
}

// groupKeyHints say, per key, what the providers that do not honour it
// should use instead.
var groupKeyHints = map[string]string{
	keyOrgs:   "it names GitHub organisations, for provider github; with gitlab or generic use authorized_groups, with google authorized_domains (the Workspace domain)",
	keyTeams:  "it names GitHub teams, for provider github; with gitlab or generic use authorized_groups, with google authorized_domains (the Workspace domain)",
	keyGroups: "it names GitLab groups or values of a groups claim, for providers gitlab and generic; with github use authorized_orgs or authorized_teams, with google authorized_domains (the Workspace domain)",
}

// refuseGroupKeys reports the admission keys by group k cannot honour, and
// the entries of its own keys that are malformed for it (GitLab paths),
// each a *auth.KeyError.
func (k *kind) refuseGroupKeys(r Rule, claim string) []error {
	var errs []error
	for key, entries := range map[string][]string{keyOrgs: r.Orgs, keyTeams: r.Teams, keyGroups: r.Groups} {
		if len(entries) > 0 && !slices.Contains(k.groupKeys, key) {
			errs = append(errs, &auth.KeyError{Key: key, Err: fmt.Errorf("provider %s cannot honour it: %s", k.name, groupKeyHints[key])})
		}
	}
	if claim != "" && !k.groupsClaim {
		errs = append(errs, &auth.KeyError{Key: keyClaim, Err: fmt.Errorf("provider %s cannot honour it: it names the claim that holds the groups for provider generic only", k.name)})
	}
	if k.name == "gitlab" {
		for _, g := range r.Groups {
			if err := checkGitLabPath(g); err != nil {
				errs = append(errs, &auth.KeyError{Key: keyGroups, Err: err})
			}
		}
	}
	return errs
}
