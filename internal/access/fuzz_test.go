package access

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
)

// FuzzRule feeds ParseRule arbitrary rule values and Decide arbitrary
// request paths: neither may panic, a parsed rule keeps an anchored
// pattern, and a path that is not canonical is never let through without
// sign-in by an anonymous rule that its clean form would not match.
func FuzzRule(f *testing.F) {
	seeds := []struct{ rule, path string }{
		{"GET ^/status$ anonymous", "/status"},
		{"* ^/admin/ deny", "/x/../admin/y"},
		{"GET,HEAD ^/api/ allow user:alice, group:ops", "/api//backups"},
		{"POST (?i)^/Admin second_factor", "/ADMIN%2fx"},
		{"* ^/ allow", "/%2e%2e/etc"},
		{"GET ^/a\\b anonymous", "/a\\b"},
		{"* ^/ anonymous", "/;x=1/..;/admin"},
		{"GET [ allow", "/"},
		{"* ^/admin/ deny", "/admin;x/users"},
		{"* ^/admin/ deny", "/public/%252e%252e/admin/users"},
		{"* ^/admin/ deny", "/public/%c0%ae%c0%ae/admin/%e0%80%af%f8%80%80%80%ae"},
		{"GET ^/public/ anonymous", "/public/%ef%bc%8e%ef%bc%8e/admin%00x%09/..%20/a./"},
	}
	for _, s := range seeds {
		f.Add(s.rule, s.path)
	}
	f.Fuzz(func(t *testing.T, value, rawPath string) {
		r, err := ParseRule("rule1", value, true)
		if err != nil {
			return
		}
		if r.Pattern == nil {
			t.Fatalf("ParseRule(%q) gave no pattern", value)
		}
		u, err := url.Parse(rawPath)
		if err != nil || u.Path == "" {
			return
		}
		if readings, _ := Readings(u); len(readings) > 289 {
			t.Fatalf("path %q has %d readings", u.Path, len(readings))
		}
		rs := &Rules{List: []Rule{r}}
		d := rs.Decide(Target{Method: "GET", URL: u}, Who{})
		if d.Policy == Anonymous && !r.Pattern.MatchString(u.Path) {
			t.Fatalf("%q: path %q let through anonymously though the pattern does not match it", value, u.Path)
		}
	})
}

// FuzzRead feeds the one reader a header (any name, any value) and a
// query: it may not panic, and a read-only scope and a rule denying every
// writing method decide alike on what it reads, in catalog and proxy
// modes (Read) as on a forwarded question (ReadForwarded).
func FuzzRead(f *testing.F) {
	seeds := []struct{ name, value, query string }{
		{"X-HTTP-Method-Override", "DELETE", ""},
		{"X_Method_Override", "put, get", "a=1"},
		{"x_http_method", "GET", "a=1;_method=DELETE"},
		{"Accept", "text/html", "_Method=DELETE"},
		{"X-Requested-With", "x", "%5Fmethod=post&_method=GET"},
		{"X-Http-Method", " ", "_method=%zz"},
	}
	for _, s := range seeds {
		f.Add(s.name, s.value, s.query)
	}
	rules := &Rules{List: []Rule{{Name: "rule1", Pattern: regexp.MustCompile(`^/`), Policy: Deny, Methods: writing}}}
	readOnly := &Scope{ReadOnly: true}
	who := Who{SignedIn: true, Name: "carol", GroupsKnown: true}
	f.Fuzz(func(t *testing.T, name, value, query string) {
		h := http.Header{name: {value}}
		u := &url.URL{Path: "/x", RawQuery: query}
		r := &http.Request{Method: "GET", URL: u, Host: "h", Header: h}
		for _, tg := range []Target{Read(r), ReadForwarded("GET", "/x?"+query, "h", h)} {
			if tg.URL == nil {
				continue
			}
			named := slices.ContainsFunc(tg.Methods(), func(m string) bool { return m != "GET" && m != "HEAD" })
			if scope := !readOnly.Allows(tg); scope != named {
				t.Fatalf("%q: %q, query %q: the scope refuses %v, methods %q", name, value, query, scope, tg.Methods())
			}
			if slices.ContainsFunc(tg.Methods(), func(m string) bool { return slices.Contains(writing, m) }) == rules.Decide(tg, who).Permits(who) {
				t.Fatalf("%q: %q, query %q: the rules and the reading disagree, methods %q", name, value, query, tg.Methods())
			}
		}
	})
}

// writing are the methods FuzzRead's rule denies.
var writing = []string{"POST", "PUT", "PATCH", "DELETE"}
