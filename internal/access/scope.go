package access

import (
	"context"
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

// Permits reports whether s lets r through, as r's one reading tells it
// (TargetOf: the request itself, or the request a forward-authentication
// question asks about), or as the request ScopedAs names for r.
func (s *Scope) Permits(r *http.Request) bool {
	if s == nil {
		return true
	}
	t := TargetOf(r)
	if s.Allows(t) {
		return true
	}
	as, ok := r.Context().Value(scopedAsKey{}).(*url.URL)
	return ok && s.Allows(t.WithURL(as))
}

// Allows reports whether s lets a request whose reading is t through. A
// read-only scope refuses every method but GET and HEAD: t's request
// line's (an unknown one included) and every method it names besides
// (t.Overrides: each override header in each spelling, each _method
// parameter), the same methods the rules decide. A path scope needs every
// reading of t's path (see Readings) under the prefix, so
// "/backups/db/../etc" never passes for "/backups/db/"; an unknown path
// (t.URL nil) is refused.
func (s *Scope) Allows(t Target) bool {
	if s == nil {
		return true
	}
	if s.ReadOnly {
		for _, m := range t.Methods() {
			if m != http.MethodGet && m != http.MethodHead {
				return false
			}
		}
	}
	if s.Path == "" {
		return true
	}
	if t.URL == nil {
		return false
	}
	paths, _ := Readings(t.URL)
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

type scopedAsKey struct{}

// ScopedAs returns r telling a machine token's scope that it may also
// admit r as the request for as: the catalog's listing of a folder (GET
// /api/backups?path=db/) is read as the folder it shows (/backups/db/),
// so that a token limited to /backups/db/ may list that folder and no
// other. The method and every method r names besides it stay r's (see
// Target.WithURL); r's own path admits it as before.
func ScopedAs(r *http.Request, as *url.URL) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), scopedAsKey{}, as))
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
