package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/refusal"
)

// headerProvider admits the user named by the request's X-Test-User
// header, with a second factor when X-Test-2FA is set: the rules are what
// is under test, not the sign-in.
type headerProvider struct{}

func (headerProvider) Type() string { return "basic" }

func (headerProvider) Identify(r *http.Request) (auth.User, bool, error) {
	name := r.Header.Get("X-Test-User")
	if name == "" {
		return auth.User{}, false, nil
	}
	return auth.User{Name: name, Type: "basic", SecondFactor: r.Header.Get("X-Test-2FA")}, true, nil
}

func (headerProvider) Challenge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
	NewErrors(nil).Refuse(w, r, refusal.AskPassword)
}

// groupTable is a GroupSource whose table the test changes.
type groupTable struct {
	mu     sync.Mutex
	groups map[string][]string
	broken bool
}

func (g *groupTable) GroupsOf(name string) ([]string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.broken {
		return nil, false
	}
	return g.groups[name], true
}

func (g *groupTable) set(groups map[string][]string, broken bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups, g.broken = groups, broken
}

// ruleLines are the rules every mode is tested with: a public status
// file, an admin area for admins with a second factor and nobody else
// (letter case ignored), a user refused one route, an operators' area.
var ruleLines = []string{
	`GET ^/backups/status\.txt$ anonymous`,
	`* ^/backups/admin second_factor group:admins`,
	`* (?i)^/backups/admin deny`,
	`* ^/api/me$ deny user:carol`,
	`* ^/backups/ops allow group:ops`,
	`* ^/backups/ops deny`,
}

func testRules(t *testing.T) *access.Rules {
	t.Helper()
	rs := &access.Rules{}
	for i, l := range ruleLines {
		r, err := access.ParseRule("rule"+string(rune('1'+i)), l, false)
		if err != nil {
			t.Fatal(err)
		}
		rs.List = append(rs.List, r)
	}
	if p := rs.Check(); len(p) > 0 {
		t.Fatal(p)
	}
	return rs
}

// seen is what the upstream echoes: the path it was asked and the
// identity headers it received.
type seen struct {
	Path, User, Groups, CustomGroups string
}

// ruleServer is backupweb in one mode over loopback, with its groups.
type ruleServer struct {
	url    string
	mode   string
	groups *groupTable
	logs   func() string
}

func startRuleServer(t *testing.T, mode string) *ruleServer {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"status.txt", "admin.txt", "ops.txt", "x.txt"} {
		must(t, os.WriteFile(filepath.Join(dir, f), []byte("content of "+f), 0o600))
	}
	gt := &groupTable{}
	gt.set(map[string][]string{"alice": {"admins", "ops"}, "bob": {"ops"}}, false)
	log, buf := quietLogger()
	var mu sync.Mutex
	o := Options{Provider: headerProvider{}, Logger: log, Rules: testRules(t), Groups: gt, GroupsHeader: "X-Forwarded-Groups",
		Resolver: peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})}
	switch mode {
	case "catalog":
		o.Catalog = catalog.New(dir)
	case "proxy":
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(seen{Path: r.URL.EscapedPath(), User: r.Header.Get("X-Forwarded-User"),
				Groups: r.Header.Get("X-Forwarded-Groups"), CustomGroups: r.Header.Get("X-Groups")})
		}))
		t.Cleanup(up.Close)
		u, _ := url.Parse(up.URL)
		o.Proxy = proxy.New(proxy.Options{Upstream: u, UserHeader: "X-Forwarded-User", GroupsHeader: "X-Groups", Logger: log})
	case "forward-auth":
		o.NoCatalog = true
	}
	srv := httptest.NewServer(NewHandler(o))
	t.Cleanup(srv.Close)
	return &ruleServer{url: srv.URL, mode: mode, groups: gt, logs: func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }}
}

// get asks for path as user (none: ""), with a second factor or not, and
// returns the status, the body and the answer's headers. In forward-auth
// mode it asks /auth/request about the request, as nginx with the
// documented snippet would (X-Original-Method, -URI, -Host).
func (s *ruleServer) get(t *testing.T, method, path, user string, twoFA bool, extra map[string]string) (int, string, http.Header) {
	t.Helper()
	target := s.url + path
	if s.mode == "forward-auth" {
		target = s.url + RequestAuthPath
	}
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.mode == "forward-auth" {
		req.Method = http.MethodGet
		req.Header.Set("X-Original-Method", method)
		req.Header.Set("X-Original-URI", path)
		req.Header.Set("X-Original-Host", "backups.example.com")
	}
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	if twoFA {
		req.Header.Set("X-Test-2FA", "totp")
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// TestRulesInEveryMode sends the same requests to backupweb serving its
// catalog, proxying an upstream, and answering nginx's auth_request, over
// loopback, and checks each rule kind's answer in each mode.
func TestRulesInEveryMode(t *testing.T) {
	cases := []struct {
		name   string
		method string
		path   string
		user   string
		twoFA  bool
		status int
		says   string // part of a refusal's body
		groups string // the groups the application is told of
		modes  string // "" every mode, else the modes it applies to
	}{
		{name: "anonymous rule, no sign-in", path: "/backups/status.txt", status: 200},
		{name: "anonymous rule, signed in: still no identity", path: "/backups/status.txt", user: "alice", status: 200},
		{name: "anonymous rule is GET only", method: "DELETE", path: "/backups/status.txt", status: 401, modes: "proxy forward-auth"},
		{name: "query naming the public file", path: "/backups/admin.txt?next=/backups/status.txt", status: 401},
		{name: "fragment naming the public file", path: "/backups/admin.txt#/backups/status.txt", status: 401, modes: "forward-auth"},
		{name: "second_factor without one", path: "/backups/admin.txt", user: "alice", status: 403, says: "second factor"},
		{name: "second_factor with one", path: "/backups/admin.txt", user: "alice", twoFA: true, status: 200, groups: "admins,ops"},
		{name: "deny after second_factor", path: "/backups/admin.txt", user: "bob", twoFA: true, status: 403, says: "may not use this page"},
		{name: "letter case", path: "/BACKUPS/Admin.txt", user: "bob", status: 403, modes: "proxy forward-auth"},
		{name: "percent-encoded letters", path: "/backups/%61dmin.txt", user: "bob", status: 403},
		{name: "dot segments", path: "/backups/ops.txt/../admin.txt", user: "bob", status: 403, says: "several ways"},
		{name: "encoded dot segments", path: "/backups/ops.txt/%2e%2e/admin.txt", user: "bob", status: 403},
		{name: "encoded slash", path: "/backups/ops.txt%2F..%2Fadmin.txt", user: "bob", status: 403},
		{name: "doubled slash", path: "//backups/admin.txt", user: "bob", status: 403, modes: "proxy"},
		{name: "deny user:", path: "/api/me", user: "carol", status: 403, modes: "catalog forward-auth"},
		{name: "allow group:", path: "/backups/ops.txt", user: "bob", status: 200, groups: "ops"},
		{name: "deny after allow group:", path: "/backups/ops.txt", user: "carol", status: 403},
		{name: "default allows", path: "/backups/x.txt", user: "carol", status: 200},
		{name: "default still asks for sign-in", path: "/backups/x.txt", status: 401},
	}
	for _, mode := range []string{"catalog", "proxy", "forward-auth"} {
		t.Run(mode, func(t *testing.T) {
			s := startRuleServer(t, mode)
			for _, c := range cases {
				if c.modes != "" && !strings.Contains(c.modes, mode) {
					continue
				}
				method := c.method
				if method == "" {
					method = http.MethodGet
				}
				status, body, h := s.get(t, method, c.path, c.user, c.twoFA, map[string]string{"Accept": "text/html"})
				if status != c.status || c.says != "" && !strings.Contains(body, c.says) {
					t.Errorf("%s: %d %.200q, want %d saying %q", c.name, status, body, c.status, c.says)
					continue
				}
				// The refusal rule: JSON under /api/ and on the forward-auth
				// endpoints, the styled page for people elsewhere.
				wantJSON := mode == "forward-auth" || strings.HasPrefix(c.path, "/api/")
				if status == 403 && wantJSON != strings.HasPrefix(h.Get("Content-Type"), "application/json") {
					t.Errorf("%s: 403 as %s: %.200q", c.name, h.Get("Content-Type"), body)
				}
				if status == 403 && !wantJSON && !strings.Contains(body, "<html") {
					t.Errorf("%s: a person's 403 is not the styled page: %.200q", c.name, body)
				}
				if status != 200 {
					continue
				}
				switch mode {
				case "proxy":
					var got seen
					json.Unmarshal([]byte(body), &got)
					wantUser := c.user
					if strings.Contains(c.name, "anonymous") {
						wantUser = ""
					}
					if got.User != wantUser || got.CustomGroups != c.groups || got.Groups != "" {
						t.Errorf("%s: upstream saw %+v, want user %q groups %q in X-Groups only", c.name, got, wantUser, c.groups)
					}
				case "forward-auth":
					if strings.Contains(c.name, "anonymous") && h.Get("X-Auth-Request-User") != "" {
						t.Errorf("%s: anonymous answer names a user", c.name)
					}
					if g := h.Get("X-Auth-Request-Groups"); g != c.groups || h.Get("X-Forwarded-Groups") != c.groups {
						t.Errorf("%s: groups answered %q / %q, want %q", c.name, g, h.Get("X-Forwarded-Groups"), c.groups)
					}
				}
			}
			if logs := s.logs(); !strings.Contains(logs, `reason="second factor required"`) || !strings.Contains(logs, `reason="denied by access rule"`) ||
				!strings.Contains(logs, "detail=rule3 ") || !strings.Contains(logs, "user=bob") {
				t.Errorf("refusals not logged as the contract says:\n%s", logs)
			}
		})
	}
}

// TestRulesGroupsChangeAndBreak: a changed groups table applies at the next
// request of the same sign-in; a broken one refuses what depends on a group
// and nothing else.
func TestRulesGroupsChangeAndBreak(t *testing.T) {
	for _, mode := range []string{"catalog", "proxy", "forward-auth"} {
		t.Run(mode, func(t *testing.T) {
			s := startRuleServer(t, mode)
			if st, _, _ := s.get(t, "GET", "/backups/ops.txt", "bob", false, nil); st != 200 {
				t.Fatalf("bob in ops: %d", st)
			}
			s.groups.set(map[string][]string{"alice": {"admins", "ops"}}, false)
			if st, _, _ := s.get(t, "GET", "/backups/ops.txt", "bob", false, nil); st != 403 {
				t.Fatalf("bob removed from ops: %d", st)
			}
			s.groups.set(nil, true)
			for _, c := range []struct {
				user, path string
				status     int
			}{
				{"alice", "/backups/ops.txt", 403},        // allow group:ops cannot be decided
				{"alice", "/backups/admin.txt", 403},      // second_factor group:admins cannot be decided
				{"carol", "/backups/x.txt", 200},          // no group rule on the way
				{"", "/backups/status.txt", 200},          // anonymous needs no groups
				{"alice", "/backups/status.txt", 200},     // nor for a signed-in person
				{"carol", "/backups/admin.txt", 403},      // the deny rule still stands
				{"bob", "/backups/ops.txt/../x.txt", 403}, // ambiguous and group-dependent
			} {
				if st, body, _ := s.get(t, "GET", c.path, c.user, false, map[string]string{"Accept": "application/json"}); st != c.status {
					t.Errorf("broken groups, %s %s: %d %s, want %d", c.user, c.path, st, body, c.status)
				}
			}
			if !strings.Contains(s.logs(), `reason="groups unknown"`) {
				t.Errorf("no refusal logged as groups unknown:\n%s", s.logs())
			}
		})
	}
}

// TestRulesJSONRefusal: an API client's 403 is JSON, never a redirect.
func TestRulesJSONRefusal(t *testing.T) {
	s := startRuleServer(t, "catalog")
	st, body, h := s.get(t, "GET", "/api/me", "carol", false, map[string]string{"Accept": "text/html"})
	if st != 403 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.Contains(body, `"error"`) {
		t.Errorf("/api/me refusal: %d %s %q", st, h.Get("Content-Type"), body)
	}
}

// TestForwardAuthUnknownRequest: a forward-auth question that does not say
// which request it is about (an untrusted peer's headers, or none) is
// refused when the rules can refuse anyone, never admitted by a guess.
func TestForwardAuthUnknownRequest(t *testing.T) {
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: headerProvider{}, Logger: log, Rules: testRules(t), NoCatalog: true}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+RequestAuthPath, nil)
	req.Header.Set("X-Test-User", "carol")
	req.Header.Set("X-Forwarded-Uri", "/backups/x.txt") // not believed: no trusted proxy
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("unknown forwarded request: %d, want 403", resp.StatusCode)
	}
	srv2 := httptest.NewServer(NewHandler(Options{Provider: headerProvider{}, Logger: log, NoCatalog: true}))
	defer srv2.Close()
	req, _ = http.NewRequest("GET", srv2.URL+RequestAuthPath, nil)
	req.Header.Set("X-Test-User", "carol")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("no rules: %d, want 200 as before", resp.StatusCode)
	}
}

// countingObserver counts refusals by reason, as the metrics do.
type countingObserver struct {
	mu      sync.Mutex
	refused map[string]int
}

func (c *countingObserver) Served(string, int, time.Duration) {}
func (c *countingObserver) Refused(_, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused[reason]++
}
func (c *countingObserver) Throttled(string) {}
func (c *countingObserver) SignedIn(string)  {}
func (c *countingObserver) SignedOut(string) {}

// TestRuleRefusalsCounted: refusals by the rules are counted under their
// reasons, which are in the fixed set the metrics accept.
func TestRuleRefusalsCounted(t *testing.T) {
	obs := &countingObserver{refused: map[string]int{}}
	gt := &groupTable{}
	gt.set(map[string][]string{"alice": {"admins"}}, false)
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: headerProvider{}, Logger: log, Rules: testRules(t), Groups: gt, Catalog: catalog.New(t.TempDir()), Observer: obs, Events: obs}))
	defer srv.Close()
	for _, c := range []struct{ user, path string }{{"alice", "/backups/admin.txt"}, {"bob", "/backups/admin.txt"}, {"bob", "/backups/ops.txt/../x"}} {
		req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
		req.Header.Set("X-Test-User", c.user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, reason := range []string{access.ReasonSecondFactor, access.ReasonDenied, access.ReasonAmbiguous} {
		if obs.refused[reason] != 1 {
			t.Errorf("reason %q counted %d times, want 1 (all: %v)", reason, obs.refused[reason], obs.refused)
		}
		if !slices.Contains(metrics.RefusalReasons(), reason) {
			t.Errorf("reason %q is not in the metrics' fixed set", reason)
		}
	}
}
