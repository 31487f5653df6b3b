package access

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
)

// requestForm is one way a client can write a request: its request line's
// method and target, and its headers.
type requestForm struct {
	name   string
	method string
	target string
	header http.Header
	// writes is true when an application that honours overrides serves
	// the request as a method other than GET or HEAD.
	writes bool
}

// requestForms are the spellings of a method override a web framework,
// a WSGI or CGI server or PHP honours, and look-alikes none of them
// honours: every decision must read them alike.
var requestForms = []requestForm{
	{"plain GET", "GET", "/backups/db/a.sql", nil, false},
	{"plain HEAD", "HEAD", "/backups/db/a.sql", nil, false},
	{"request line DELETE", "DELETE", "/backups/db/a.sql", nil, true},
	{"X-HTTP-Method-Override", "GET", "/backups/db/a.sql", http.Header{"X-Http-Method-Override": {"DELETE"}}, true},
	{"X-HTTP-Method", "GET", "/backups/db/a.sql", http.Header{"X-Http-Method": {"DELETE"}}, true},
	{"X-Method-Override", "GET", "/backups/db/a.sql", http.Header{"X-Method-Override": {"DELETE"}}, true},
	{"x-http-method-override lower case", "GET", "/backups/db/a.sql", http.Header{"x-http-method-override": {"delete"}}, true},
	{"X_HTTP_Method_Override", "GET", "/backups/db/a.sql", http.Header{"X_HTTP_Method_Override": {"DELETE"}}, true},
	{"X_Method_Override", "GET", "/backups/db/a.sql", http.Header{"X_Method_Override": {"DELETE"}}, true},
	{"x_http_method", "GET", "/backups/db/a.sql", http.Header{"x_http_method": {"DELETE"}}, true},
	{"X-Http_Method-Override mixed", "GET", "/backups/db/a.sql", http.Header{"X-Http_Method-Override": {"DELETE"}}, true},
	{"override list", "GET", "/backups/db/a.sql", http.Header{"X-Http-Method-Override": {"GET, DELETE"}}, true},
	{"override repeated", "GET", "/backups/db/a.sql", http.Header{"X-Http-Method-Override": {"GET", "DELETE"}}, true},
	{"?_method", "GET", "/backups/db/a.sql?_method=DELETE", nil, true},
	{"& joined", "GET", "/backups/db/a.sql?a=1&_method=DELETE", nil, true},
	{"; joined", "GET", "/backups/db/a.sql?a=1;_method=DELETE", nil, true},
	{"?_Method", "GET", "/backups/db/a.sql?_Method=DELETE", nil, true},
	{"?_METHOD=post", "GET", "/backups/db/a.sql?_METHOD=post", nil, true},
	{"_method repeated, last", "GET", "/backups/db/a.sql?_method=GET&_method=DELETE", nil, true},
	{"_method repeated, first", "GET", "/backups/db/a.sql?_method=DELETE&_method=GET", nil, true},
	{"%5Fmethod", "GET", "/backups/db/a.sql?%5Fmethod=DELETE", nil, true},
	{"_%6Dethod, value encoded", "GET", "/backups/db/a.sql?_%6Dethod=%44ELETE", nil, true},
	{"_method value with spaces", "GET", "/backups/db/a.sql?_method=+delete+", nil, true},
	{"_method=GET", "GET", "/backups/db/a.sql?_method=get", nil, false},
	{"override HEAD", "GET", "/backups/db/a.sql", http.Header{"X-Http-Method-Override": {"HEAD"}}, false},
	{"look-alike names", "GET", "/backups/db/a.sql?method=DELETE&__method=PUT&_methods=PUT", http.Header{"X-Http-Methods": {"DELETE"}, "X-Method": {"PUT"}}, false},
	{"empty override", "GET", "/backups/db/a.sql?_method=", http.Header{"X-Http-Method-Override": {" "}}, false},
}

// TestOneReading: every decision kind (the rules, a second-factor rule,
// a read-only and a path scope, allow_users, the catalog's hiding as it
// reads a folder's path, and a forward-authentication question) reads
// every request form as the rules do: refused exactly when the form names
// a method that writes.
func TestOneReading(t *testing.T) {
	denyWrites := mustRules(t, false, "POST,PUT,PATCH,DELETE ^/ deny")
	factorWrites := mustRules(t, false, "POST,PUT,PATCH,DELETE ^/ second_factor")
	allowUsers := &Rules{List: append([]Rule{OnlyUsers([]string{"carol"})}, denyWrites.List...)}
	readOnly := &Scope{ReadOnly: true}
	pathScope := &Scope{Path: "/backups/db/"}
	for _, f := range requestForms {
		t.Run(f.name, func(t *testing.T) {
			r := httptest.NewRequest(f.method, f.target, nil)
			for k, v := range f.header {
				r.Header[k] = v
			}
			tg := Read(r)
			fwd := ReadForwarded(f.method, f.target, r.Host, r.Header)
			rulesRefuse := !denyWrites.Decide(tg, carol).Permits(carol)
			if rulesRefuse != f.writes {
				t.Fatalf("the rules refuse %v, want %v (overrides %q)", rulesRefuse, f.writes, tg.Overrides)
			}
			hidden := tg.WithURL(&url.URL{Path: "/backups/db/"})
			for _, c := range []struct {
				kind    string
				refused bool
			}{
				{"forwarded question", !denyWrites.Decide(fwd, carol).Permits(carol)},
				{"second_factor rule", !factorWrites.Decide(tg, carol).Permits(carol)},
				{"allow_users", !allowUsers.Decide(tg, carol).Permits(carol)},
				{"catalog's hiding", !denyWrites.Decide(hidden, carol).Permits(carol)},
				{"read-only scope", !readOnly.Permits(r)},
				{"read-only scope, forwarded", !readOnly.Allows(fwd)},
				{"read-only scope, stored reading", !readOnly.Permits(WithTarget(r, fwd))},
				{"path scope with a write rule", !pathScope.Permits(r) || !denyWrites.Decide(tg, carol).Permits(carol)},
			} {
				if c.refused != rulesRefuse {
					t.Errorf("%s: refused %v, the rules %v", c.kind, c.refused, rulesRefuse)
				}
			}
			if !pathScope.Permits(r) {
				t.Errorf("the path scope refuses a path under it")
			}
		})
	}
}

// TestTargetOf: a request carries the reading made once; one without it
// is read on demand.
func TestTargetOf(t *testing.T) {
	r := httptest.NewRequest("GET", "/x?_method=PUT", nil)
	if got := TargetOf(r); got.Method != "GET" || len(got.Overrides) != 1 || got.Overrides[0] != "PUT" {
		t.Errorf("TargetOf without a stored reading: %+v", got)
	}
	asked := ReadForwarded("DELETE", "/y", "app.example.com", nil)
	if got := TargetOf(WithTarget(r, asked)); got.Method != "DELETE" || got.URL.Path != "/y" || got.Host != "app.example.com" {
		t.Errorf("TargetOf with a stored reading: %+v", got)
	}
}

// TestReadSeesEveryHeader: Read, which reads the method overrides and a
// path override header in one pass over the headers, finds what
// Overrides and PathOverride find on their own, with both kinds of
// header together, in any spelling, among other headers.
func TestReadSeesEveryHeader(t *testing.T) {
	for _, c := range []struct {
		name     string
		target   string
		header   http.Header
		methods  []string
		override string
	}{
		{"none", "/a", http.Header{"Accept": {"*/*"}, "Cookie": {"s=1"}}, nil, ""},
		{"method header", "/a", http.Header{"Accept": {"*/*"}, "X-Http-Method-Override": {"delete"}}, []string{"DELETE"}, ""},
		{"method header and query", "/a?_method=PUT", http.Header{"X_http_method": {"PATCH, DELETE"}}, []string{"PATCH", "DELETE", "PUT"}, ""},
		{"path header", "/a", http.Header{"Cookie": {"s=1"}, "X-Original-Url": {"/admin"}}, nil, "X-Original-URL"},
		{"path header, underscores", "/a", http.Header{"x_rewrite_url": {"/admin"}}, nil, "X-Rewrite-URL"},
		{"both", "/a?_Method=DELETE", http.Header{"Accept": {"*/*"}, "X-Method-Override": {"PUT"}, "X-Override-Url": {"/admin"}, "User-Agent": {"t"}}, []string{"PUT", "DELETE"}, "X-Override-URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, c.target, nil)
			r.Header = c.header
			tg := Read(r)
			if !slices.Equal(tg.Overrides, c.methods) {
				t.Errorf("Read's overrides %q, want %q", tg.Overrides, c.methods)
			}
			if alone := Overrides(r.Header, r.URL.RawQuery); !slices.Equal(alone, c.methods) {
				t.Errorf("Overrides %q, want %q", alone, c.methods)
			}
			alone, _ := PathOverride(r.Header)
			if tg.PathOverride != c.override || alone != c.override {
				t.Errorf("Read's path override %q, PathOverride %q; want %q", tg.PathOverride, alone, c.override)
			}
		})
	}
}
