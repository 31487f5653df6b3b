package access

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	for _, tt := range []struct {
		value      string
		catchAll   bool
		want       string // Rule.String(); "" when refused
		wantErrHas string
	}{
		{value: "* ^/admin/ deny", want: "* ^/admin/ deny"},
		{value: "get,Head ^/api/ allow group:ops", want: "GET,HEAD ^/api/ allow group:ops"},
		{value: "POST,PUT ^/api/ allow user:alice, group:admins,group:ops", want: "POST,PUT ^/api/ allow user:alice,group:admins,group:ops"},
		{value: "* ^/x second_factor user:a user:b", want: "* ^/x second_factor user:a,user:b"},
		{value: "GET ^/status$ ANONYMOUS", want: "GET ^/status$ anonymous"},
		{value: "* ^/x allow user:a,user:a", want: "* ^/x allow user:a"},
		{value: "* ^/ anonymous", catchAll: true, want: "* ^/ anonymous"},
		{value: "* ^/ anonymous", wantErrHas: "matches every path"},
		{value: "* ^/x anonymous user:a", wantErrHas: "no users or groups"},
		{value: "* /admin deny", wantErrHas: "must start with ^"},
		{value: "* admin deny", wantErrHas: "must start with ^"},
		{value: "* ^/( deny", wantErrHas: "not a regular expression"},
		{value: "* ^/x permit", wantErrHas: "not a policy"},
		{value: "G@T ^/x allow", wantErrHas: "not a method"},
		{value: "GET, ^/x allow", wantErrHas: "not a method"},
		{value: "* ^/x allow team:a", wantErrHas: "not a subject"},
		{value: "* ^/x allow user:", wantErrHas: "not a subject"},
		{value: "* ^/x allow alice", wantErrHas: "not a subject"},
		{value: "* ^/x", wantErrHas: "want METHODS PATH-REGEX POLICY"},
		{value: "", wantErrHas: "want METHODS"},
	} {
		r, err := ParseRule("rule1", tt.value, tt.catchAll)
		if tt.wantErrHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) || !strings.HasPrefix(err.Error(), "rule1: ") {
				t.Errorf("%q: error %v, want one naming rule1 and saying %q", tt.value, err, tt.wantErrHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.value, err)
			continue
		}
		if got := r.String(); got != tt.want {
			t.Errorf("%q: reads as %q, want %q", tt.value, got, tt.want)
		}
	}
}

func TestSetHosts(t *testing.T) {
	r, _ := ParseRule("rule1", "* ^/ deny", false)
	if err := r.SetHosts([]string{"Backups.Example.com", ".example.org."}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Hosts, []string{"backups.example.com", ".example.org"}) {
		t.Fatalf("hosts %v", r.Hosts)
	}
	for _, bad := range []string{"", ".", "a/b", "user@host", "host:80", "*.example.com"} {
		if err := r.SetHosts([]string{bad}); err == nil {
			t.Errorf("%q accepted as a host", bad)
		}
	}
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"backups.example.com", true}, {"BACKUPS.example.com:8443", true}, {"backups.example.com.", true},
		{"a.example.org", true}, {"example.org", false}, {"evil-example.org", false},
		{"backups.example.com.evil.org", false}, {"x.backups.example.com", false},
	} {
		got := r.names("GET", NormalHost(tt.host), "/")
		if got != tt.want {
			t.Errorf("host %q: named %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestRequestURL(t *testing.T) {
	for _, tt := range []struct {
		uri, path string
		ok        bool
	}{
		{"/admin?x=1", "/admin", true},
		{"/public?next=/admin", "/public", true},
		{"/admin#/public", "/admin", true},
		{"/a%2Fb", "/a/b", true},
		{"//evil.example/admin", "//evil.example/admin", true}, // a path, as a server reads a request line
		{"http://host/admin", "/admin", true},                  // absolute form
		{"HTTPS://host/admin?x", "/admin", true},
		{"ftp://host/admin", "", false},
		{"http://host", "", false},
		{"admin", "", false},
		{"", "", false},
		{"/%zz", "", false},
		{"*", "", false},
	} {
		u := RequestURL(tt.uri)
		if (u != nil) != tt.ok || u != nil && u.Path != tt.path {
			t.Errorf("%q: %v, want path %q (ok %v)", tt.uri, u, tt.path, tt.ok)
		}
		if u != nil && (u.Host != "" || u.Fragment != "") {
			t.Errorf("%q: %#v keeps a host or fragment", tt.uri, u)
		}
	}
	if u := RequestURL("/a?_method=DELETE#x"); u == nil || u.RawQuery != "_method=DELETE" {
		t.Errorf("the query is not kept: %v", u)
	}
}

func TestReadings(t *testing.T) {
	for _, tt := range []struct {
		raw       string
		canonical bool
		want      []string
	}{
		{"/admin/users", true, []string{"/admin/users"}},
		{"/x/../admin", false, []string{"/x/../admin", "/admin"}},
		{"/x/%2e%2e/admin", false, []string{"/x/../admin", "/admin"}},
		{"/x/..%2Fadmin", false, []string{"/x/../admin", "/admin"}},
		{"//admin", false, []string{"//admin", "/admin"}},
		{"/public/..;/admin", false, []string{"/public/..;/admin", "/admin"}},
		{`/public/..\admin`, false, []string{`/public/..\admin`, "/admin"}},
		{"/a/./b/", false, []string{"/a/./b/", "/a/b/"}},
		{"/a%00/../../b", false, []string{"/a\x00/../../b", "/b", "/a"}}, // as decoded (also without the NUL), cut at the NUL
		{"/a;x/b", false, []string{"/a;x/b", "/a/b"}},
	} {
		u, err := url.ParseRequestURI(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, canonical := Readings(u)
		if canonical != tt.canonical || !slices.Equal(got, tt.want) {
			t.Errorf("%q: readings %q (canonical %v), want %q (%v)", tt.raw, got, canonical, tt.want, tt.canonical)
		}
	}
}
