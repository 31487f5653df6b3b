package access

import (
	"errors"
	"net/http/httptest"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		entry   string
		methods []string
		problem error
		bad     bool
	}{
		{entry: "^/healthz$"},
		{entry: "GET=^/rest/noauth/health$", methods: []string{"GET"}},
		{entry: "get|Head = ^/api/ping", methods: []string{"GET", "HEAD"}},
		{entry: "health", problem: ErrUnanchored},
		{entry: "GET=/api/health", methods: []string{"GET"}, problem: ErrUnanchored},
		{entry: "^/", problem: ErrCatchAll},
		{entry: "^.*", problem: ErrCatchAll},
		{entry: ".*", problem: ErrUnanchored},
		{entry: "^/.*$", problem: ErrCatchAll},
		{entry: "POST|PUT=^/(|.*)", methods: []string{"POST", "PUT"}, problem: ErrCatchAll},
		{entry: "^/api/(", bad: true},
		{entry: "G ET=^/x", bad: true},
		{entry: "GET=", bad: true},
		{entry: "", bad: true},
	} {
		r, problem, err := Parse(tt.entry)
		if tt.bad {
			if err == nil {
				t.Errorf("%q: accepted", tt.entry)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.entry, err)
			continue
		}
		if !errors.Is(problem, tt.problem) || problem != nil && tt.problem == nil {
			t.Errorf("%q: problem %v, want %v", tt.entry, problem, tt.problem)
		}
		if len(r.Methods) != len(tt.methods) {
			t.Errorf("%q: methods %v, want %v", tt.entry, r.Methods, tt.methods)
			continue
		}
		for i := range r.Methods {
			if r.Methods[i] != tt.methods[i] {
				t.Errorf("%q: methods %v, want %v", tt.entry, r.Methods, tt.methods)
			}
		}
	}
}

// TestMatch checks a route list against the spellings that could make
// backupweb and the application disagree about which path was asked for.
func TestMatch(t *testing.T) {
	var rs Routes
	for _, e := range []string{"GET|HEAD=^/rest/noauth/health$", "^/public/", "POST=^/api/hook$"} {
		r, problem, err := Parse(e)
		if err != nil || problem != nil {
			t.Fatal(e, err, problem)
		}
		rs = append(rs, r)
	}
	for _, tt := range []struct {
		method, target string
		want           bool
	}{
		{"GET", "/rest/noauth/health", true},
		{"HEAD", "/rest/noauth/health", true},
		{"POST", "/rest/noauth/health", false},
		{"GET", "/rest/noauth/health?x=1", true},
		{"GET", "/rest/noauth/healthz", false},
		{"GET", "/x/rest/noauth/health", false},
		{"GET", "/REST/NOAUTH/HEALTH", false},                // letter case
		{"GET", "/rest/noauth/%68ealth", true},               // an unreserved letter encoded: same path
		{"GET", "/rest/noauth/health/../../../admin", false}, // dot segments
		{"GET", "/admin/../rest/noauth/health", false},       // cleans into the route: still not canonical
		{"GET", "/rest/./noauth/health", false},              // dot segment
		{"GET", "//rest/noauth/health", false},               // doubled slash
		{"GET", "/rest//noauth/health", false},               // doubled slash
		{"GET", "/rest/noauth%2Fhealth", false},              // encoded slash
		{"GET", "/public/..%2Fadmin", false},                 // encoded slash and dots
		{"GET", "/public/%2e%2e/admin", false},               // encoded dot segment
		{"GET", "/public\\..\\admin", false},                 // backslashes
		{"GET", "/admin?next=/public/x", false},              // the query names an allowed path
		{"GET", "/admin#/public/", false},                    // a fragment (never sent, but still)
		{"GET", "/public/..;/admin", false},                  // a dot segment with a path parameter
		{"GET", "/public/..%3Bx/admin", false},               // the same, its ; encoded
		{"GET", "/public/.;/app.js", false},                  // a single dot with a parameter
		{"GET", "/public/app.js;v=2", false},                 // a parameter: /public/app.js to Tomcat
		{"GET", "/public/%2561pp.js", false},                 // %25: decoded twice elsewhere
		{"GET", "/public/app.js.", false},                    // a trailing dot
		{"GET", "/public/%ef%bc%8e%ef%bc%8e/admin", false},   // full-width dots
		{"GET", "/public/app.js", true},                      // prefix route
		{"GET", "/public/", true},                            // trailing slash kept
		{"POST", "/api/hook", true},
		{"GET", "/api/hook", false},
		{"POST", "/api/hook?_method=DELETE", false},       // an override the route does not name
		{"GET", "/public/x?_method=DELETE", true},         // the route names every method
		{"GET", "/rest/noauth/health?_method=head", true}, // an override it names
		{"GET", "/rest/noauth/health?_method=POST", false},
	} {
		r := httptest.NewRequest(tt.method, "http://example.test"+tt.target, nil)
		if got := rs.Match(r); got != tt.want {
			t.Errorf("%s %s: match %v, want %v", tt.method, tt.target, got, tt.want)
		}
	}
	r := httptest.NewRequest("GET", "http://example.test/rest/noauth/health", nil)
	r.Header.Set("X-HTTP-Method-Override", "DELETE")
	if rs.Match(r) {
		t.Error("GET with X-HTTP-Method-Override: DELETE matched a GET|HEAD route")
	}
}
