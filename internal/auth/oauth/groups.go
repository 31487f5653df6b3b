package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/exactjson"
)

// Groups: what the identity provider says the account belongs to, read at
// sign-in, kept in the session record (whose MAC covers it) and handed to
// every request as auth.User.Groups.

// Limits on the groups of one account. An account beyond them is refused
// rather than given part of its groups: a rule that denies a group must
// not miss it because it was on a page not read.
const (
	// maxGroups bounds how many groups one account may carry.
	maxGroups = 1000
	// maxGroupLen bounds one group's name, in bytes.
	maxGroupLen = 256
	// maxGroupsBytes bounds the groups of one account as the session
	// record keeps them, so that a record stays cheap to read and check
	// on every request.
	maxGroupsBytes = 64 << 10
	// maxPages bounds the pages of one listing of GitHub's or GitLab's API.
	maxPages = 20
	// perPage is the page size asked of GitHub's and GitLab's API (their
	// maximum).
	perPage = "100"
)

// Session attributes of oauth sessions besides email, name and provider.
const (
	// groupsAttr holds the account's groups, one per line. It is moved
	// from the attributes to auth.User.Groups by Identify.
	groupsAttr = "groups"
	// hostedDomainAttr holds Google's hd claim, when the account has one.
	hostedDomainAttr = "hd"
)

// DefaultGroupsClaim is the default of groups_claim: the claim of the ID
// token or user-information answer whose values are the groups, for
// provider generic.
const DefaultGroupsClaim = "groups"

// errGroups marks a failure to read the account's groups: the sign-in is
// refused, never completed without them.
var errGroups = errors.New("oauth: reading the account's groups")

// groupsFunc reads the groups of the account id from the provider's API
// with the access token: GitHub's organisations and teams, GitLab's
// groups. The groups are returned as the provider spells them.
type groupsFunc func(ctx *fetchContext, id identity) ([]string, error)

// fetchContext is what a groupsFunc needs: the request's context, the
// HTTP client, the token and the configuration.
type fetchContext struct {
	ctx context.Context
	c   *http.Client
	tok *oauth2.Token
	cfg Config
}

// wantsGroups reports whether sign-ins read the account's groups: the rule
// admits by group, or the scopes already let the provider tell them (so
// that [access] rules can name groups without admitting by them). Provider
// generic always reads its claim; google has no groups.
func (k *kind) wantsGroups(cfg Config) bool {
	switch {
	case k.groupsClaim:
		return true
	case k.groups == nil:
		return false
	}
	return cfg.Rule.ByGroup() || slices.ContainsFunc(cfg.Scopes, func(s string) bool { return slices.Contains(k.groupScopes, s) })
}

// readGroups returns the groups of the account id, sorted and without
// repeats, or an error that refuses the sign-in. A groups claim that is
// neither a string nor an array of strings gives no groups and a warning,
// as do single values no rule or header could carry (see usableGroup).
func (p *Provider) readGroups(ctx context.Context, r *http.Request, tok *oauth2.Token, id identity) ([]string, error) {
	if !p.kind.wantsGroups(p.cfg) {
		return nil, nil
	}
	var raw []string
	if p.kind.groupsClaim {
		var problem string
		raw, problem = claimGroups(id.Claims[p.cfg.GroupsClaim])
		if problem != "" {
			p.log.LogAttrs(r.Context(), slog.LevelWarn, "oauth: the groups claim is not usable; the account has no groups from it",
				slog.String("provider", p.cfg.Provider), slog.String("claim", p.cfg.GroupsClaim), slog.String("problem", problem),
				slog.String("user", printable(id.Email, 254)))
		}
	} else {
		var err error
		raw, err = p.kind.groups(&fetchContext{ctx: ctx, c: p.client, tok: tok, cfg: p.cfg}, id)
		if err != nil {
			return nil, err
		}
	}
	groups, dropped, err := cleanGroups(raw, p.kind.foldGroups)
	if err != nil {
		return nil, err
	}
	if len(dropped) > 0 {
		p.log.LogAttrs(r.Context(), slog.LevelWarn, "oauth: groups left out: empty, too long, or holding a comma, control or formatting character",
			slog.String("provider", p.cfg.Provider), slog.Int("count", len(dropped)), slog.String("first", printable(dropped[0], 64)),
			slog.String("user", printable(id.Email, 254)))
	}
	return groups, nil
}

// claimGroups reads a groups claim: an array of strings gives those, a
// string gives one group, an absent claim or null gives none. Anything
// else (a number, an object, an array holding something other than
// strings) gives none and a problem to log.
func claimGroups(raw jsontext.Value) (groups []string, problem string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	var one string
	if exactjson.Decode(raw, &one) == nil {
		return []string{one}, ""
	}
	var many []string
	if err := exactjson.Decode(raw, &many); err == nil {
		return many, ""
	}
	kind := "a value that is neither a string nor an array of strings"
	if raw[0] == '[' {
		kind = "an array holding something other than strings"
	}
	return nil, kind
}

// cleanGroups returns groups sorted and without repeats, lowering ASCII
// letters when fold is set (GitHub's names, which GitHub compares ignoring
// case). Values usableGroup refuses are returned apart. More than
// maxGroups, or more than maxGroupsBytes in the session, is an error.
func cleanGroups(groups []string, fold bool) (clean, dropped []string, err error) {
	for _, g := range groups {
		if !usableGroup(g) {
			dropped = append(dropped, g)
			continue
		}
		if fold {
			g = toLowerASCII(g)
		}
		clean = append(clean, g)
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	if len(clean) > maxGroups {
		return nil, nil, fmt.Errorf("%w: the account has more than %d groups; it is refused rather than admitted with part of them", errGroups, maxGroups)
	}
	if n := len(encodeGroups(clean)); n > maxGroupsBytes {
		return nil, nil, fmt.Errorf("%w: the account's groups take %d bytes, more than %d; it is refused rather than admitted with part of them", errGroups, n, maxGroupsBytes)
	}
	return clean, dropped, nil
}

// usableGroup reports whether g can be carried as a group: not empty, at
// most maxGroupLen bytes of UTF-8, no leading or trailing space, and no
// comma (the separator of groups in a header and of subjects in rules),
// control, formatting or white-space character other than the plain
// space. A value refused here could not be named by a rule, and could
// forge a second group in a comma-separated header.
func usableGroup(g string) bool {
	if g == "" || len(g) > maxGroupLen || !utf8.ValidString(g) || strings.TrimSpace(g) != g {
		return false
	}
	return !strings.ContainsFunc(g, func(c rune) bool { return c == ',' || c != ' ' && invisible(c) })
}

// encodeGroups is the session attribute of groups: one per line (a group
// holds no control character).
func encodeGroups(groups []string) string { return strings.Join(groups, "\n") }

// decodeGroups reverses encodeGroups.
func decodeGroups(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, "\n")
}
