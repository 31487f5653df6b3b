package config

import (
	"slices"
	"strconv"
	"strings"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/ini"
)

// Access is the [access] section with the shorthand keys folded in.
type Access struct {
	// Rules are the effective rules, in evaluation order: [proxy]
	// skip_auth_routes as anonymous rules (proxy mode), [proxy]
	// allow_users as a rule refusing every other signed-in user (proxy
	// and forward-auth modes), then [access] rule<N> in ascending N, and
	// the default ([access] default, allow or deny). Never nil.
	Rules *access.Rules
}

// loadAccess reads [access] and builds the effective rules with the
// shorthand keys of [proxy] as mode uses them. Every key of [access] must
// be default, rule<N> or rule<N>.hosts: anything else is an error, since a
// misspelt rule would silently stop refusing. Rules that can never decide
// (access.Rules.Check) are errors. Rules that name hosts serve those and
// srv's public_url's host only (access.Rules.ServedHosts).
func loadAccess(s, prx *ini.Section, p Proxy, srv Server) Access {
	mode := srv.Mode
	rs := &access.Rules{}
	if srv.PublicURL != nil {
		rs.PublicHost = srv.PublicURL.Hostname()
	}
	if mode == ModeProxy {
		for _, rt := range p.SkipAuthRoutes {
			rs.List = append(rs.List, access.FromRoute("skip_auth_routes", rt))
		}
	}
	if len(p.AllowUsers) > 0 && mode != ModeCatalog {
		rs.List = append(rs.List, access.OnlyUsers(p.AllowUsers))
	}
	switch d := strings.ToLower(strings.TrimSpace(s.String("default", "allow"))); d {
	case "allow":
	case "deny":
		rs.DefaultDeny = true
	default:
		s.Errorf("default", "must be allow (any signed-in user, the default) or deny")
	}
	type numbered struct {
		n    uint64
		key  string
		rule access.Rule
	}
	var rules []numbered
	seen := map[uint64]string{}
	for _, key := range s.OwnKeys() {
		base, hosts := strings.CutSuffix(key, ".hosts")
		n, ok := ruleNumber(base)
		switch {
		case key == "default":
			continue
		case !ok:
			hint := "keys are rule<N> (N a whole number), rule<N>.hosts and default"
			if want, near := ini.Suggest(key, []string{"default", "rule1", "rule1.hosts"}); near {
				hint = "did you mean " + strings.TrimSuffix(want, "1") + "...? " + hint
			}
			s.Errorf(key, "unknown key: %s", hint)
			continue
		case hosts:
			if !s.Has(base) {
				s.Errorf(key, "names the hosts of %s, which is not set", base)
			}
			continue
		}
		if other, dup := seen[n]; dup {
			s.Errorf(key, "is rule number %d again (as %s); give every rule its own number", n, other)
			continue
		}
		seen[n] = key
		v, _ := s.Lookup(key)
		r, err := access.ParseRule(key, v, p.AllowAnonymous)
		if err != nil {
			s.Errorf(key, "%v", err)
			continue
		}
		if s.Has(key + ".hosts") {
			if err := r.SetHosts(s.List(key + ".hosts")); err != nil {
				s.Errorf(key+".hosts", "%v", err)
				continue
			}
		}
		rules = append(rules, numbered{n, key, r})
	}
	slices.SortFunc(rules, func(a, b numbered) int {
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	})
	for _, r := range rules {
		rs.List = append(rs.List, r.rule)
	}
	warnOpenHosts(s, rs, mode)
	for _, msg := range rs.Check() {
		key := strings.SplitN(msg, " ", 2)[0]
		if key == "skip_auth_routes" || key == "allow_users" {
			prx.Errorf(key, "%s", msg)
			continue
		}
		s.Errorf(key, "%s", msg)
	}
	return Access{Rules: rs}
}

// warnOpenHosts warns when rules name hosts and default = allow lets any
// signed-in user through on a host no rule names: public_url's host in
// catalog and proxy modes (where other hosts get 421), every other host a
// proxy forwards in forward-auth mode.
func warnOpenHosts(s *ini.Section, rs *access.Rules, mode string) {
	if !rs.NamesHosts() || rs.DefaultDeny {
		return
	}
	key := "default"
	if !s.Has(key) {
		for _, r := range rs.List {
			if len(r.Hosts) > 0 {
				key = r.Name + ".hosts"
				break
			}
		}
	}
	if mode == ModeForwardAuth {
		s.Warnf(key, "rules name hosts, and default = allow lets any signed-in user through on every other host a proxy forwards; set default = deny and allow what each host needs")
		return
	}
	s.Warnf(key, "rules name hosts, and default = allow lets any signed-in user through where no rule decides (public_url's host is served too; other hosts get 421); set default = deny and allow what each host needs")
}

// ruleNumber reads N of a key rule<N>.
func ruleNumber(key string) (uint64, bool) {
	digits, ok := strings.CutPrefix(key, "rule")
	if !ok || digits == "" {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}
