// Package access decides who may do what, per request: the [access]
// rules (rule.go: "METHODS PATH-REGEX POLICY [SUBJECT,...]"), evaluated
// first-match (decide.go) over every reading of the request's path
// (path.go), with the start-up checks that refuse rules that can never
// decide (check.go). [proxy] skip_auth_routes (Routes, this file) are
// anonymous rules written the older way, and [proxy] allow_users is one
// rule too (OnlyUsers).
//
// The one rule that keeps matching safe: a path that is not already in
// canonical form (dot segments, doubled slashes, an encoded slash or
// backslash, path parameters, %25, overlong UTF-8, control characters,
// full-width dots, a trailing dot or space) names no anonymous rule and no
// route at all, and the other rules must decide all its readings alike.
// The upstream receives the path as the client escaped it, and an
// application that reads
// "/admin/..%2Fhealth" differently from backupweb must never get it
// without sign-in, nor escape a rule for ^/admin.
package access

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Route is one entry of a route list: which methods (none listed: any)
// and which paths (Pattern, matched as Go's regexp.MatchString does).
type Route struct {
	// Methods are upper-case method names; empty means every method.
	Methods []string
	// Pattern matches the request's canonical path (see Canonical).
	Pattern *regexp.Regexp
	// Source is the entry as written, for messages.
	Source string
}

// ErrUnanchored and ErrCatchAll are what Parse reports about patterns
// that only an explicit choice may allow (see Problem).
var (
	// ErrUnanchored: the pattern does not start with ^, so it matches
	// anywhere in the path ("health" names /admin/health too).
	ErrUnanchored = errors.New("the path pattern does not start with ^, so it matches anywhere in a path")
	// ErrCatchAll: the pattern matches every path.
	ErrCatchAll = errors.New("the path pattern matches every path")
)

// catchAllProbes are paths of unrelated shapes: a pattern matching all of
// them names the whole application (^/, ^.*, .*, ^/.*).
var catchAllProbes = []string{"/", "/admin", "/settings/users/1", "/rest/system/config", "/.well-known/security.txt", "/index.html"}

// Parse reads one entry, "METHODS=^/pattern" or "^/pattern": METHODS is
// one method or several joined by | ("GET|HEAD"), in any case. It returns
// the route and, separately, a problem the caller may accept: ErrUnanchored
// or ErrCatchAll (the route is usable all the same). err reports an entry
// that cannot be used at all: a bad method name or a pattern that does not
// compile. Messages quote the entry, which is not a secret.
func Parse(entry string) (r Route, problem, err error) {
	entry = strings.TrimSpace(entry)
	r.Source = entry
	pat := entry
	if i := strings.Index(entry, "="); i >= 0 && !strings.HasPrefix(entry, "^") {
		methods, rest := entry[:i], entry[i+1:]
		for m := range strings.SplitSeq(methods, "|") {
			m = strings.ToUpper(strings.TrimSpace(m))
			if !validMethod(m) {
				return Route{}, nil, fmt.Errorf("%q: %q is not a method name (write GET, or several as GET|HEAD)", entry, m)
			}
			if !slices.Contains(r.Methods, m) {
				r.Methods = append(r.Methods, m)
			}
		}
		pat = strings.TrimSpace(rest)
	}
	if pat == "" {
		return Route{}, nil, fmt.Errorf("%q: no path pattern (write ^/path, or GET=^/path)", entry)
	}
	re, cerr := regexp.Compile(pat)
	if cerr != nil {
		return Route{}, nil, fmt.Errorf("%q: the path pattern is not a regular expression: %v", entry, cerr)
	}
	r.Pattern = re
	switch {
	case !strings.HasPrefix(pat, "^"):
		problem = ErrUnanchored
	case matchesAll(re):
		problem = ErrCatchAll
	}
	return r, problem, nil
}

func matchesAll(re *regexp.Regexp) bool {
	for _, p := range catchAllProbes {
		if !re.MatchString(p) {
			return false
		}
	}
	return true
}

// validMethod reports whether m is an HTTP method token.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Matches reports whether the route names a request with method and
// canonical path p (see Canonical).
func (r Route) Matches(method, p string) bool {
	if len(r.Methods) > 0 && !slices.Contains(r.Methods, method) {
		return false
	}
	return r.Pattern.MatchString(p)
}

// Routes is a list of routes; a request is named when any one names it.
type Routes []Route

// Match reports whether the routes name r, as its one reading tells it
// (TargetOf): its path in canonical form with r's method and with every
// method it names besides (see Overrides),
// each named by one of the routes. A path that is not canonical matches
// nothing. The query takes part only through its _method parameter.
func (rs Routes) Match(r *http.Request) bool {
	if len(rs) == 0 {
		return false
	}
	t := TargetOf(r)
	if t.URL == nil {
		return false
	}
	p, ok := Canonical(t.URL)
	if !ok {
		return false
	}
	for _, m := range t.Methods() {
		if !rs.matchOne(m, p) {
			return false
		}
	}
	return true
}

// matchOne reports whether one of the routes names method and the
// canonical path p.
func (rs Routes) matchOne(method, p string) bool {
	for _, route := range rs {
		if route.Matches(method, p) {
			return true
		}
	}
	return false
}

// Canonical returns u's path decoded, and whether it is in canonical form:
// a path that every common server reads as backupweb does. It starts with
// /, has no "." or ".." segment and no empty segment (doubled slash), and
// its escaped form encodes no slash or backslash (%2F, %5C), which an
// application could read either as a separator or as a character. Nor is
// a path canonical that other servers read as another path (see
// Readings): one holding a backslash, a ";" (servlet containers drop path
// parameters), a "%" once decoded (%25: decoded twice elsewhere), bytes
// that are not UTF-8 (overlong forms), NUL or another control character,
// a character whose compatibility form is a dot, slash, backslash,
// semicolon, percent sign or space (see fold: "．．" is ".." under Unicode
// NFKC), or a segment ending in a dot or a space (Windows drops them).
// Letter case is kept: patterns are case-sensitive, as paths are.
func Canonical(u *url.URL) (string, bool) {
	p := u.Path
	if p == "" || p[0] != '/' || u.Opaque != "" {
		return "", false
	}
	raw := strings.ToLower(u.EscapedPath())
	if strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") {
		return "", false
	}
	if !utf8.ValidString(p) || strings.ContainsFunc(p, readsTwoWays) {
		return "", false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " ") {
			return "", false
		}
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if clean != p {
		return "", false
	}
	return p, true
}

// readsTwoWays reports whether a character of a decoded path makes it read
// differently elsewhere (see Canonical).
func readsTwoWays(c rune) bool {
	return c == '\\' || c == ';' || c == '%' || unicode.IsControl(c) || folds(c)
}
