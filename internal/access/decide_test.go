package access

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// mustRules builds rules from rule-language lines, named rule1, rule2...
func mustRules(t testing.TB, defaultDeny bool, lines ...string) *Rules {
	t.Helper()
	rs := &Rules{DefaultDeny: defaultDeny}
	for i, l := range lines {
		host := ""
		if before, after, ok := strings.Cut(l, " @"); ok {
			l, host = before, after
		}
		r, err := ParseRule(fmt.Sprintf("rule%d", i+1), l, true)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			if err := r.SetHosts(strings.Split(host, ",")); err != nil {
				t.Fatal(err)
			}
		}
		rs.List = append(rs.List, r)
	}
	return rs
}

func target(method, raw, host string) Target {
	u, err := url.ParseRequestURI(raw)
	if err != nil {
		panic(err)
	}
	return Target{Method: method, URL: u, Host: host}
}

var (
	alice  = Who{SignedIn: true, Name: "alice", Groups: []string{"admins", "ops"}, GroupsKnown: true}
	bob    = Who{SignedIn: true, Name: "bob", Groups: []string{"ops"}, GroupsKnown: true}
	carol  = Who{SignedIn: true, Name: "carol", GroupsKnown: true}
	nobody = Who{}
)

// backupService is the example of docs/access.md: a public status page,
// read-only operators, an admin path for admins with a second factor.
var backupService = []string{
	"GET ^/status$ anonymous",
	"* ^/admin/ second_factor group:admins",
	"* ^/admin/ deny",
	"GET,HEAD ^/ allow group:ops",
	"* ^/ deny group:ops",
}

func TestDecide(t *testing.T) {
	rs := mustRules(t, false, backupService...)
	withFactor := alice
	withFactor.SecondFactor = true
	broken := bob
	broken.GroupsKnown = false
	for _, tt := range []struct {
		name   string
		t      Target
		who    Who
		policy Policy
		rule   string
		ok     bool
		reason string
	}{
		{"public status", target("GET", "/status", "h"), nobody, Anonymous, "rule1", true, ""},
		{"status with a query naming admin", target("GET", "/status?next=/admin/", "h"), nobody, Anonymous, "rule1", true, ""},
		{"status POST is no anonymous", target("POST", "/status", "h"), nobody, Allow, DefaultRule, false, ""},
		{"HEAD follows GET", target("HEAD", "/status", "h"), nobody, Anonymous, "rule1", true, ""},
		{"lower-case method", target("get", "/status", "h"), nobody, Anonymous, "rule1", true, ""},
		{"admin without factor", target("GET", "/admin/x", "h"), alice, SecondFactor, "rule2", false, ReasonSecondFactor},
		{"admin with factor", target("GET", "/admin/x", "h"), withFactor, SecondFactor, "rule2", true, ""},
		{"operator on admin", target("GET", "/admin/x", "h"), bob, Deny, "rule3", false, ReasonDenied},
		{"operator reads", target("GET", "/api/backups", "h"), bob, Allow, "rule4", true, ""},
		{"operator writes", target("POST", "/api/backups", "h"), bob, Deny, "rule5", false, ReasonDenied},
		{"others: default", target("POST", "/api/backups", "h"), carol, Allow, DefaultRule, true, ""},
		{"dot segments escape nothing", target("GET", "/status/../admin/x", "h"), bob, Deny, "rule4", false, ReasonAmbiguous},
		{"dot segments into admin", target("GET", "/api/../admin/x", "h"), bob, Deny, "rule4", false, ReasonAmbiguous},
		{"encoded dot segments", target("GET", "/api/%2e%2e/admin/x", "h"), bob, Deny, "rule4", false, ReasonAmbiguous},
		{"encoded slash", target("GET", "/api/..%2Fadmin/x", "h"), bob, Deny, "rule4", false, ReasonAmbiguous},
		{"doubled slash", target("GET", "//admin/x", "h"), bob, Deny, "rule4", false, ReasonAmbiguous},
		{"doubled slash, same everywhere", target("GET", "/api//backups", "h"), bob, Allow, "rule4", true, ""},
		{"path parameters", target("GET", "/api/..;/admin/x", "h"), bob, Deny, "rule4", false, ReasonAmbiguous},
		{"non-canonical is never anonymous", target("GET", "/./status", "h"), nobody, Allow, DefaultRule, false, ""},
		{"letter case is the path's", target("GET", "/ADMIN/x", "h"), carol, Allow, DefaultRule, true, ""},
		{"broken groups refuse", target("POST", "/api/backups", "h"), broken, Deny, "rule5", false, ReasonGroupsUnknown},
		{"broken groups: anonymous stays", target("GET", "/status", "h"), nobody, Anonymous, "rule1", true, ""},
		{"unknown path", Target{Method: "GET", Host: "h"}, bob, Deny, DefaultRule, false, ReasonAmbiguous},
		{"unknown method on a GET rule", Target{URL: &url.URL{Path: "/api/x"}, Host: "h"}, bob, Deny, "rule5", false, ReasonAmbiguous},
		{"unknown method, same everywhere", Target{URL: &url.URL{Path: "/admin/x"}, Host: "h"}, bob, Deny, "rule3", false, ReasonDenied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := rs.Decide(tt.t, tt.who)
			if d.Policy != tt.policy || d.Rule != tt.rule || d.Permits(tt.who) != tt.ok || d.Reason != tt.reason {
				t.Errorf("decision %+v (permits %v), want %s %s permits %v reason %q", d, d.Permits(tt.who), tt.policy, tt.rule, tt.ok, tt.reason)
			}
		})
	}
}

func TestDecideHosts(t *testing.T) {
	rs := mustRules(t, false, "* ^/ deny @admin.example.com", "* ^/ allow user:alice @.example.org", "* ^/ deny @.example.org")
	for _, tt := range []struct {
		host string
		who  Who
		ok   bool
	}{
		{"admin.example.com", alice, false},
		{"Admin.Example.com:443", alice, false},
		{"backups.example.com", alice, true},
		{"a.example.org", alice, true},
		{"a.example.org", bob, false},
		{"", alice, false}, // unknown host: deny on some host, allow on others
		{"", carol, false},
	} {
		d := rs.Decide(Target{Method: "GET", URL: &url.URL{Path: "/x"}, Host: tt.host}, tt.who)
		if d.Permits(tt.who) != tt.ok {
			t.Errorf("host %q, %s: %+v, want permits %v", tt.host, tt.who.Name, d, tt.ok)
		}
	}
	if d := (&Rules{}).Decide(Target{Method: "GET", URL: &url.URL{Path: "/x"}}, bob); !d.Permits(bob) {
		t.Errorf("no rules, unknown host: %+v", d)
	}
}

func TestUnknownPathWithPathFreeRules(t *testing.T) {
	rs := &Rules{List: []Rule{OnlyUsers([]string{"alice"})}}
	rs.List = append(rs.List, mustRules(t, false, "GET ^/public$ anonymous", "* ^/ deny group:banned").List...)
	banned := alice
	banned.Groups = []string{"banned"}
	for _, tt := range []struct {
		who Who
		ok  bool
	}{{alice, true}, {bob, false}, {banned, false}, {nobody, false}} {
		if d := rs.Decide(Target{Method: "GET"}, tt.who); d.Permits(tt.who) != tt.ok || d.Reason == ReasonAmbiguous {
			t.Errorf("%q, unknown path: %+v, want permits %v", tt.who.Name, d, tt.ok)
		}
	}
	rs.List = append(rs.List, mustRules(t, false, "* ^/admin deny").List...)
	if d := rs.Decide(Target{Method: "GET"}, alice); d.Permits(alice) || d.Reason != ReasonAmbiguous {
		t.Errorf("a path-bound deny rule and an unknown path: %+v", d)
	}
}

func TestAllowUsersGate(t *testing.T) {
	rs := &Rules{List: []Rule{OnlyUsers([]string{"alice"})}}
	extra := mustRules(t, false, "GET ^/public$ anonymous", "* ^/ops allow group:ops")
	rs.List = append(rs.List, extra.List...)
	if d := rs.Decide(target("GET", "/ops", "h"), bob); d.Permits(bob) || d.Reason != ReasonNotAllowed || d.Rule != "allow_users" {
		t.Errorf("bob, not in allow_users, passes through a later group rule: %+v", d)
	}
	if d := rs.Decide(target("GET", "/x", "h"), alice); !d.Permits(alice) {
		t.Errorf("alice refused: %+v", d)
	}
	if d := rs.Decide(target("GET", "/public", "h"), nobody); d.Policy != Anonymous {
		t.Errorf("anonymous rule after allow_users: %+v", d)
	}
}

// reference is the rules' meaning written as plainly as possible, for one
// reading: the first rule whose method, host, path and subjects name the
// request decides; an anonymous rule names only canonical paths; a rule
// that needs unknown groups refuses.
func reference(rs *Rules, method, host, p string, canonical bool, who Who) (Policy, string, bool) {
	for _, r := range rs.List {
		if r.Policy == Anonymous && !canonical {
			continue
		}
		methodOK := len(r.Methods) == 0
		for _, m := range r.Methods {
			if m == method || m == "GET" && method == "HEAD" {
				methodOK = true
			}
		}
		hostOK := len(r.Hosts) == 0
		for _, h := range r.Hosts {
			if h == host || strings.HasPrefix(h, ".") && strings.HasSuffix(host, h) && host != h[1:] {
				hostOK = true
			}
		}
		if !methodOK || !hostOK || !r.Pattern.MatchString(p) {
			continue
		}
		if len(r.Users)+len(r.Groups) > 0 {
			if !who.SignedIn {
				continue
			}
			named := false
			for _, u := range r.Users {
				named = named || u == who.Name
			}
			if !named && len(r.Groups) > 0 && !who.GroupsKnown {
				return Deny, r.Name, false
			}
			for _, g := range r.Groups {
				for _, h := range who.Groups {
					named = named || g == h
				}
			}
			if !named {
				continue
			}
		}
		switch r.Policy {
		case Anonymous:
			return Anonymous, r.Name, true
		case Allow:
			return Allow, r.Name, who.SignedIn
		case SecondFactor:
			return SecondFactor, r.Name, who.SignedIn && who.SecondFactor
		}
		return Deny, r.Name, false
	}
	if rs.DefaultDeny {
		return Deny, DefaultRule, false
	}
	return Allow, DefaultRule, who.SignedIn
}

// TestDecideMatchesReference draws random rule lists and requests and
// checks that Decide gives what the plain reference gives: for a canonical
// path, the same policy, rule and verdict; for any other path, a pass only
// when every reading passes in the reference.
func TestDecideMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	methods := []string{"*", "GET", "POST", "GET,POST", "DELETE"}
	paths := []string{"^/", "^/a", "^/a/", "^/a/b$", "^/b", "^/a/.*c", "^/(a|b)/x$", "^/c$"}
	policies := []string{"allow", "deny", "anonymous", "second_factor"}
	subjects := []string{"", "", "user:u1", "group:g1", "user:u2,group:g2", "group:g1,group:g2"}
	hosts := []string{"", "", "", "h1", ".h2"}
	reqPaths := []string{"/", "/a", "/a/", "/a/b", "/a/bc", "/b/x", "/a/x", "/c", "/a/../c", "//a/b", "/b/./x", "/a%2Fb", "/c/..;/a", "/A/b"}
	reqMethods := []string{"GET", "HEAD", "POST", "DELETE", "PUT"}
	reqHosts := []string{"h1", "x.h2", "h2", "other"}
	users := []string{"u1", "u2", "u3"}
	groups := [][]string{nil, {"g1"}, {"g2"}, {"g1", "g2"}}
	for trial := range 3000 {
		rs := &Rules{DefaultDeny: rng.IntN(2) == 0}
		for i := range 1 + rng.IntN(6) {
			policy := policies[rng.IntN(len(policies))]
			subj := subjects[rng.IntN(len(subjects))]
			if policy == "anonymous" {
				subj = ""
			}
			line := strings.TrimSpace(fmt.Sprintf("%s %s %s %s", methods[rng.IntN(len(methods))], paths[rng.IntN(len(paths))], policy, subj))
			r, err := ParseRule(fmt.Sprintf("rule%d", i+1), line, true)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if h := hosts[rng.IntN(len(hosts))]; h != "" {
				r.SetHosts([]string{h})
			}
			rs.List = append(rs.List, r)
		}
		for range 20 {
			who := Who{}
			if rng.IntN(4) > 0 {
				who = Who{SignedIn: true, Name: users[rng.IntN(len(users))], Groups: groups[rng.IntN(len(groups))],
					GroupsKnown: rng.IntN(8) > 0, SecondFactor: rng.IntN(2) == 0}
			}
			method, host := reqMethods[rng.IntN(len(reqMethods))], reqHosts[rng.IntN(len(reqHosts))]
			u, err := url.ParseRequestURI(reqPaths[rng.IntN(len(reqPaths))])
			if err != nil {
				t.Fatal(err)
			}
			got := rs.Decide(Target{Method: method, URL: u, Host: host}, who)
			readings, canonical := Readings(u)
			if canonical {
				p, rule, ok := reference(rs, method, host, readings[0], true, who)
				if got.Policy != p || got.Rule != rule || got.Permits(who) != ok {
					t.Fatalf("trial %d: rules\n%s\n%s %s on %s for %+v: got %+v (permits %v), reference %s %s %v",
						trial, strings.Join(rs.Explain(), "\n"), method, u.Path, host, who, got, got.Permits(who), p, rule, ok)
				}
				continue
			}
			all, none := true, true
			for _, p := range readings {
				_, _, ok := reference(rs, method, host, p, false, who)
				all, none = all && ok, none && !ok
			}
			if got.Permits(who) != all || !all && !none && got.Reason != ReasonAmbiguous {
				t.Fatalf("trial %d: rules\n%s\n%s %q (readings %q) for %+v: got %+v, reference all-pass %v none-pass %v",
					trial, strings.Join(rs.Explain(), "\n"), method, u.Path, readings, who, got, all, none)
			}
		}
	}
}

func TestEmptyRulesAllowEveryone(t *testing.T) {
	var rs *Rules
	if d := rs.Decide(target("DELETE", "/x/../y", "h"), carol); !d.Permits(carol) || d.Rule != DefaultRule {
		t.Errorf("nil rules: %+v", d)
	}
	if !rs.Empty() || rs.HasAnonymous() {
		t.Error("nil rules not empty")
	}
	if !slices.Equal((&Rules{}).Explain(), []string{"default: allow any signed-in user (no rule named the request)"}) {
		t.Errorf("explain: %q", (&Rules{}).Explain())
	}
}
