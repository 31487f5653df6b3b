package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/testkit"
)

// twoWayRules: a public area, an admin area nobody may use, and an API
// whose writes other than POST are refused.
var twoWayRules = []string{
	`GET ^/public/ anonymous`,
	`* ^/admin/ deny`,
	`DELETE,PUT,PATCH ^/api/ deny`,
}

// twoWayServer is backupweb with twoWayRules in proxy mode (proxy true) or
// answering forward authentication, over loopback, trusting 127.0.0.1 as
// a proxy. reached counts the requests the upstream received.
type twoWayServer struct {
	url     string
	proxy   bool
	reached atomic.Int64
}

func startTwoWayServer(t *testing.T, withProxy bool) *twoWayServer {
	t.Helper()
	rs := &access.Rules{}
	for i, l := range twoWayRules {
		r, err := access.ParseRule("rule"+string(rune('1'+i)), l, false)
		must(t, err)
		rs.List = append(rs.List, r)
	}
	s := &twoWayServer{proxy: withProxy}
	log, _ := quietLogger()
	o := Options{Provider: headerProvider{}, Logger: log, Rules: rs, NoCatalog: true,
		Resolver: peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})}
	if withProxy {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.reached.Add(1) }))
		t.Cleanup(up.Close)
		u, _ := url.Parse(up.URL)
		o.Proxy = proxy.New(proxy.Options{Upstream: u, Logger: log})
	}
	srv := httptest.NewServer(NewHandler(o))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// ask sends method and target (as written on the wire) with the extra
// headers, as user ("": not signed in): straight to the proxy, or as the
// question a trusted proxy asks at endpoint, with the original method and
// target in both the X-Original-* and the X-Forwarded-* headers. It
// returns the status and the body.
func (s *twoWayServer) ask(t *testing.T, endpoint, method, target, user string, extra http.Header) (int, string) {
	t.Helper()
	var req *http.Request
	if s.proxy {
		req = testkit.TargetRequest(method, s.url, target)
	} else {
		req, _ = http.NewRequest("GET", s.url+endpoint, nil)
		host := "backups.example.com"
		if after, ok := strings.CutPrefix(target, "http://"); ok {
			host, _, _ = strings.Cut(after, "/")
		}
		for _, h := range [][2]string{{"Method", method}, {"URI", target}, {"Host", host}} {
			req.Header.Set("X-Original-"+h[0], h[1])
			req.Header.Set("X-Forwarded-"+h[0], h[1])
		}
		req.Header.Set("X-Forwarded-Uri", target)
		req.Header.Set("X-Forwarded-Proto", "http")
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// twoWayModes are the places a request meets the rules: the built-in
// proxy, and both forward-authentication endpoints.
var twoWayModes = []struct {
	name     string
	proxy    bool
	endpoint string
	// unsigned is the status of an ambiguous path before sign-in: 400,
	// but 403 for nginx, which takes any other status for an error.
	unsigned int
}{
	{"proxy", true, "", 400},
	{"auth-request", false, RequestAuthPath, 403},
	{"auth-forward", false, ForwardAuthPath, 400},
}

// TestAmbiguousPathsInEveryMode: every form of a path that reads two ways
// is refused before sign-in (400; 403 for nginx) and after (403), through
// the built-in proxy and both forward-auth endpoints, and never reaches
// the upstream; the plain paths around them are answered as the rules say.
func TestAmbiguousPathsInEveryMode(t *testing.T) {
	for _, m := range twoWayModes {
		t.Run(m.name, func(t *testing.T) {
			s := startTwoWayServer(t, m.proxy)
			for _, c := range []struct {
				target, user string
				status       int
			}{
				{"/public/x", "", 200},
				{"/admin/users", "carol", 403},
				{"/other", "carol", 200},
				{"/other;jsessionid=1", "carol", 200}, // ambiguous, but no reading is refused
				{"/public/..;/admin/users", "", m.unsigned},
			} {
				if st, body := s.ask(t, m.endpoint, "GET", c.target, c.user, nil); st != c.status {
					t.Errorf("%s as %q: %d %s, want %d", c.target, c.user, st, body, c.status)
				}
			}
			base := s.reached.Load()
			for _, a := range testkit.AmbiguousTargets {
				if st, body := s.ask(t, m.endpoint, "GET", a.Target, "", nil); st != m.unsigned || !strings.Contains(body, "several ways") {
					t.Errorf("%s %s, not signed in: %d %s, want %d", a.Name, a.Target, st, body, m.unsigned)
				}
				if st, body := s.ask(t, m.endpoint, "GET", a.Target, "carol", nil); st != 403 || !strings.Contains(body, "several ways") {
					t.Errorf("%s %s, signed in: %d %s, want 403", a.Name, a.Target, st, body)
				}
			}
			if n := s.reached.Load() - base; n != 0 {
				t.Errorf("the upstream received %d ambiguous requests", n)
			}
		})
	}
}

// TestMethodOverrideInEveryMode: a method named in an override header or
// a _method parameter is decided as the request's own, through the proxy
// and both forward-auth endpoints.
func TestMethodOverrideInEveryMode(t *testing.T) {
	overrides := []struct {
		name   string
		target string
		header http.Header
	}{
		{"X-HTTP-Method-Override", "/api/x", http.Header{"X-Http-Method-Override": {"DELETE"}}},
		{"X-HTTP-Method", "/api/x", http.Header{"X-Http-Method": {"PUT"}}},
		{"X-Method-Override", "/api/x", http.Header{"X-Method-Override": {"PATCH"}}},
		{"lower case, underscores", "/api/x", http.Header{"x_http_method_override": {"delete"}}},
		{"a list", "/api/x", http.Header{"X-Http-Method-Override": {"POST, DELETE"}}},
		{"_method", "/api/x?_method=DELETE", nil},
		{"_method encoded", "/api/x?a=1&%5Fmethod=put", nil},
	}
	for _, m := range twoWayModes {
		t.Run(m.name, func(t *testing.T) {
			s := startTwoWayServer(t, m.proxy)
			if st, body := s.ask(t, m.endpoint, "POST", "/api/x", "carol", nil); st != 200 {
				t.Fatalf("POST /api/x: %d %s", st, body)
			}
			base := s.reached.Load()
			for _, o := range overrides {
				if st, body := s.ask(t, m.endpoint, "POST", o.target, "carol", o.header); st != 403 {
					t.Errorf("%s: %d %s, want 403", o.name, st, body)
				}
			}
			if n := s.reached.Load() - base; n != 0 {
				t.Errorf("the upstream received %d overridden requests", n)
			}
			// The anonymous rule names GET only: a GET that names another
			// method asks for a sign-in.
			for _, h := range []http.Header{{"X-Http-Method-Override": {"POST"}}, {"X-Method-Override": {"DELETE"}}} {
				if st, body := s.ask(t, m.endpoint, "GET", "/public/x", "", h); st != 401 {
					t.Errorf("GET /public/x with %v, not signed in: %d %s, want 401", h, st, body)
				}
			}
			if st, body := s.ask(t, m.endpoint, "GET", "/public/x?_method=DELETE", "", nil); st != 401 {
				t.Errorf("GET /public/x?_method=DELETE, not signed in: %d %s, want 401", st, body)
			}
		})
	}
}

// TestMethodOverrideInCatalog: backupweb's own catalog routes apply the
// rules to the methods a request names besides its own too.
func TestMethodOverrideInCatalog(t *testing.T) {
	rs := &access.Rules{}
	r, err := access.ParseRule("rule1", `DELETE ^/api/ deny`, false)
	must(t, err)
	rs.List = append(rs.List, r)
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: headerProvider{}, Logger: log, Rules: rs, Catalog: catalog.New(t.TempDir())}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		target string
		header http.Header
		status int
	}{
		{"/api/backups", nil, 200},
		{"/api/backups", http.Header{"X-Http-Method-Override": {"DELETE"}}, 403},
		{"/api/backups?_method=delete", nil, 403},
	} {
		req, _ := http.NewRequest("GET", srv.URL+c.target, nil)
		for k, v := range c.header {
			req.Header[k] = v
		}
		req.Header.Set("X-Test-User", "carol")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("GET %s %v: %d, want %d", c.target, c.header, resp.StatusCode, c.status)
		}
	}
}
