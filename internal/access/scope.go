package access

import (
	"net/http"
	"net/url"
	"strings"
)

// Scope limits what a request admitted by a machine token may do, before
// the access rules are asked: ReadOnly allows GET and HEAD only, Path
// only paths under that prefix. A nil *Scope limits nothing. It is the
// auth.Scope of a user admitted by a token (type flask-login).
type Scope struct {
	ReadOnly bool
	Path     string
}

// methodOverrides are the headers some applications read as the method;
// a read-only scope allows a request only when none of them names another
// method.
var methodOverrides = []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"}

// Permits reports whether s lets a request for method and u through. A
// read-only scope refuses every method but GET and HEAD, in the request
// line, in a method-override header (hdr, may be nil) or in a _method
// query parameter. A path scope needs every reading of u's path (see
// Readings) under the prefix, so "/backups/db/../etc" never passes
// for "/backups/db/"; an unknown target (u nil) is refused.
func (s *Scope) Permits(method string, u *url.URL, hdr http.Header) bool {
	if s == nil {
		return true
	}
	if s.ReadOnly {
		methods := []string{method}
		for _, h := range methodOverrides {
			methods = append(methods, hdr.Values(h)...)
		}
		if u != nil {
			methods = append(methods, u.Query()["_method"]...)
		}
		for _, m := range methods {
			if m = strings.ToUpper(strings.TrimSpace(m)); m != http.MethodGet && m != http.MethodHead {
				return false
			}
		}
	}
	if s.Path == "" {
		return true
	}
	if u == nil {
		return false
	}
	paths, _ := Readings(u)
	if len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		if !underPrefix(p, s.Path) {
			return false
		}
	}
	return true
}

// String describes s for a log line: "read-only", "path PREFIX", both,
// or "none" for a nil scope or one that limits nothing.
func (s *Scope) String() string {
	var parts []string
	if s != nil && s.ReadOnly {
		parts = append(parts, "read-only")
	}
	if s != nil && s.Path != "" {
		parts = append(parts, "path "+s.Path)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// underPrefix reports whether p is prefix, or below it: at once when
// prefix ends in "/", at the next "/" otherwise ("/backups/db" admits
// "/backups/db/x", never "/backups/dbx").
func underPrefix(p, prefix string) bool {
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	return len(p) == len(prefix) || strings.HasSuffix(prefix, "/") || p[len(prefix)] == '/'
}
